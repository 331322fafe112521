import { afterAll, describe, expect, test } from "bun:test";
import { fetchPinned, postPinned } from "../../src/lib/pinned-http";

const received: { host: string | null; body: string; signature: string | null }[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    received.push({
      host: request.headers.get("host"),
      body: await request.text(),
      signature: request.headers.get("x-sig"),
    });
    return new Response("ignored", { status: 202, headers: { "x-answer": "yes" } });
  },
});
afterAll(() => server.stop(true));

const init = () => ({
  headers: { "content-type": "application/json", "x-sig": "abc" },
  body: '{"a":1}',
  signal: AbortSignal.timeout(5000),
});

test("connects to the given address without resolving the name, and keeps the name in Host", async () => {
  // .invalid never resolves: the request can only succeed through the pinned address.
  const response = await postPinned(
    new URL(`http://pinned.invalid:${server.port}/hook`),
    ["127.0.0.1"],
    init(),
  );
  expect(response.status).toBe(202);
  expect(response.headers.get("x-answer")).toBe("yes");
  expect(received.at(-1)).toEqual({
    host: `pinned.invalid:${server.port}`,
    body: '{"a":1}',
    signature: "abc",
  });
});

test("a name that would resolve to the receiver is not used when the checked address differs", async () => {
  const before = received.length;
  // localhost resolves to 127.0.0.1 where the server listens; the pinned 127.0.0.2 has no listener.
  await expect(
    postPinned(new URL(`http://localhost:${server.port}/hook`), ["127.0.0.2"], init()),
  ).rejects.toThrow();
  expect(received.length).toBe(before);
});

test("a kept-alive connection to the name is not reused for a request approved for another address", async () => {
  const url = new URL(`http://reused.invalid:${server.port}/hook`);
  expect((await postPinned(url, ["127.0.0.1"], init())).status).toBe(202);
  const before = received.length;
  // The server listens on 127.0.0.1 only: 127.0.0.2 is reached only through the earlier connection.
  await expect(postPinned(url, ["127.0.0.2"], init())).rejects.toThrow("ECONNREFUSED");
  expect(received.length).toBe(before);
});

test("no address at all is an error, not a lookup", async () => {
  await expect(postPinned(new URL(`http://localhost:${server.port}/`), [], init())).rejects.toThrow(
    "no address",
  );
});

test("a receiver answering an impossible status is an error, not a crash", async () => {
  const raw = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.write("HTTP/1.1 600 Odd\r\ncontent-length: 0\r\n\r\n");
        socket.end();
      },
    },
  });
  try {
    await expect(
      postPinned(new URL(`http://receiver.invalid:${raw.port}/`), ["127.0.0.1"], init()),
    ).rejects.toThrow("invalid HTTP status 600");
  } finally {
    raw.stop(true);
  }
});

describe("fetchPinned", () => {
  const answers = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/redirect") return Response.redirect(`http://127.0.0.1:${server.port}/hook`, 302);
      if (path === "/large") return new Response("x".repeat(4096));
      if (path === "/empty") return new Response(null, { status: 204 });
      return Response.json({
        method: request.method,
        host: request.headers.get("host"),
        type: request.headers.get("content-type"),
        body: await request.text(),
      });
    },
  });
  afterAll(() => answers.stop(true));
  const at = (path: string) => new URL(`http://provider.invalid:${answers.port}${path}`);
  const limit = { maxBodyBytes: 1024, signal: AbortSignal.timeout(5000) };

  test("sends any method to the given address only and reads the answer's body", async () => {
    const read = await fetchPinned(at("/doc"), ["127.0.0.1"], { method: "GET", headers: {}, ...limit });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({
      method: "GET",
      host: `provider.invalid:${answers.port}`,
      type: null,
      body: "",
    });
    const form = await fetchPinned(at("/token"), ["127.0.0.1"], {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new TextEncoder().encode("grant_type=authorization_code&code=abc"),
      ...limit,
    });
    expect(await form.json()).toMatchObject({
      method: "POST",
      type: "application/x-www-form-urlencoded",
      body: "grant_type=authorization_code&code=abc",
    });
  });

  test("answers a redirect as it is, without following it", async () => {
    const before = received.length;
    const answer = await fetchPinned(at("/redirect"), ["127.0.0.1"], {
      method: "GET",
      headers: {},
      ...limit,
    });
    expect(answer.status).toBe(302);
    expect(answer.headers.get("location")).toBe(`http://127.0.0.1:${server.port}/hook`);
    expect(received.length).toBe(before);
  });

  test("refuses an answer longer than the limit, and keeps a bodiless status bodiless", async () => {
    await expect(
      fetchPinned(at("/large"), ["127.0.0.1"], { method: "GET", headers: {}, ...limit }),
    ).rejects.toThrow("longer than 1024 bytes");
    const empty = await fetchPinned(at("/empty"), ["127.0.0.1"], { method: "GET", headers: {}, ...limit });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });
});
