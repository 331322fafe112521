import { describe, expect, test } from "bun:test";
import { createLogger, REDACTED } from "../../src/lib/log";

function jsonLogger() {
  const lines: string[] = [];
  const log = createLogger({ format: "json", level: "info", write: (line) => lines.push(line) });
  return { log, entries: () => lines.map((line) => JSON.parse(line)) };
}

describe("log lines", () => {
  test("secret-named fields are redacted however often they are written, identifiers are not", () => {
    const { log, entries } = jsonLogger();
    for (let round = 0; round < 3; round++)
      log.info("request", {
        password: "hunter2",
        api_key: "bwk_secret",
        refresh_token: "r",
        Authorization: "Bearer x",
        api_key_id: "key-1",
        request_id: "req-1",
      });
    for (const entry of entries())
      expect(entry).toMatchObject({
        password: REDACTED,
        api_key: REDACTED,
        refresh_token: REDACTED,
        Authorization: REDACTED,
        api_key_id: "key-1",
        request_id: "req-1",
      });
  });

  test("a field named __proto__ (parsed input passed as fields) cannot carry other fields past redaction", () => {
    const { log, entries } = jsonLogger();
    log.info("request", JSON.parse('{"__proto__": {"password": "hunter2"}, "status": 200}'));
    const [entry] = entries();
    expect(entry).toEqual({ time: entry.time, level: "info", msg: "request", status: 200 });
  });

  test("time, level and message come first; errors, bigints and undefined fields are written plainly", () => {
    const { log, entries } = jsonLogger();
    log.warn("failed", {
      error: new Error("outer", { cause: new Error("inner") }),
      count: 12n,
      missing: undefined,
      nested: { a: 1 },
      status: 503,
    });
    const [entry] = entries();
    expect(Object.keys(entry)).toEqual(["time", "level", "msg", "error", "count", "nested", "status"]);
    expect(entry).toMatchObject({
      level: "warn",
      msg: "failed",
      error: { name: "Error", message: "outer", cause: { name: "Error", message: "inner" } },
      count: "12",
      nested: { a: 1 },
      status: 503,
    });
    expect(typeof entry.error.stack).toBe("string");
    expect(Number.isNaN(Date.parse(entry.time))).toBe(false);
  });

  test("a field that cannot be written as JSON keeps the entry, and entries under the level are dropped", () => {
    const { log, entries } = jsonLogger();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    log.debug("hidden");
    log.error("cycle", { value: cyclic });
    expect(entries()).toEqual([
      expect.objectContaining({ level: "error", msg: "cycle", fields: "[unserializable]" }),
    ]);
  });
});

/** Runs `body` in a bun process with `log`, a JSON logger on standard output; returns the process. */
function loggingProcess(body: string) {
  const script = `import { createLogger } from ${JSON.stringify(`${import.meta.dir}/../../src/lib/log.ts`)};
const log = createLogger({ format: "json", level: "info" });
${body}`;
  return Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
}

const messagesOf = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).msg);

describe("log lines on standard output", () => {
  test("come out in the order written: a warning writes the lines before it, an exit writes the rest", async () => {
    const child = loggingProcess(`
log.info("first"); log.info("second"); log.warn("third"); log.info("fourth"); log.announce("fifth");
log.info("sixth"); log.info("seventh");
process.exit(3);`);
    expect(await child.exited).toBe(3);
    expect(messagesOf(await new Response(child.stdout).text())).toEqual([
      "first",
      "second",
      "third",
      "fourth",
      "fifth",
      "sixth",
      "seventh",
    ]);
  });

  test("a lone info line is written while the process runs on, not held for more lines or for the exit", async () => {
    const child = loggingProcess(`log.info("alone"); setTimeout(() => {}, 60_000);`);
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    expect(messagesOf(new TextDecoder().decode(value))).toEqual(["alone"]);
    expect(child.exitCode).toBeNull();
    child.kill();
    await child.exited;
  });
});
