/**
 * Benchmark baseline: the stack's own ceiling for an HTTP answer. A raw Bun.serve answering a small JSON
 * object to every request; `npm run bench` compares Bulwark's reads with it in the same run.
 */
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch: () => Response.json({ status: "ok", version: "baseline" }),
});
console.log(`listening on http://127.0.0.1:${server.port}`);
