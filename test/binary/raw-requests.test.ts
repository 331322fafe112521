/**
 * Requests no HTTP client library would send, written byte for byte to the executable's socket: odd
 * Host headers, HTTP/1.0 without a Host, CONNECT. Each gets the error body or the right route,
 * never a 500, and the router and the rate limiter always agree on which route a request is for.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callServer, executablePath, type RunningServer, startServer } from "../helpers/binary";

let server: RunningServer;
let port: number;

/** A server from an empty folder with the first admin raw@example.com and `perAddress` requests/min. */
async function start(perAddress: number): Promise<RunningServer> {
  return startServer(await executablePath(), mkdtempSync(join(tmpdir(), "bulwark-raw-")), {
    BULWARK_ADMIN_EMAIL: "raw@example.com",
    BULWARK_ADMIN_PASSWORD: "raw-password-1234",
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(perAddress),
  });
}

beforeAll(async () => {
  server = await start(10_000);
  port = Number(new URL(server.url).port);
}, 30_000);

afterAll(async () => {
  await server?.stop();
});

/** Sends `head` (and nothing else) on a fresh connection; resolves with the status and the body. */
function rawRequest(head: string): Promise<{ status: number; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(head)}`)), 5000);
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (socket) => {
          socket.write(head);
        },
        data: (_socket, chunk) => {
          text += chunk.toString();
        },
        close: () => {
          clearTimeout(timer);
          const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
          resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4), text });
        },
        error: (_socket, error) => reject(error),
      },
    }).catch(reject);
  });
}

const get = (path: string, host: string | null, extra = "") =>
  rawRequest(
    `GET ${path} HTTP/1.1\r\n${host === null ? "" : `Host: ${host}\r\n`}${extra}Connection: close\r\n\r\n`,
  );

test("malformed Host headers and targets are a 400 with the error body, never a 500", async () => {
  const answers = [
    await get("/api/v1/health", ""),
    await get("/api/v1/health", ":80"),
    await get("/api/v1/health", "a#b"),
    await get("/api/v1/health", "[::1"),
    await get("/api/v1/health", "127.0.0.1:abc"),
    await rawRequest("CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: close\r\n\r\n"),
  ];
  for (const answer of answers) {
    expect(answer.status, answer.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
    expect(answer.status, answer.text.slice(0, 200)).toBeLessThan(500);
    if (!answer.body.startsWith("{")) continue;
    const body = JSON.parse(answer.body);
    expect(body.code).toBe(answer.status);
    // Refused before routing, yet with the request id and rate-limit headers every answer carries.
    expect(answer.text).toMatch(new RegExp(`x-request-id: ${body.request_id}`, "i"));
    expect(answer.text).toMatch(/x-ratelimit-remaining: \d+/i);
  }
  expect(server.output()).not.toContain("unhandled error");
});

test("HTTP/1.0 without a Host and hosts shorter than four characters reach the route they name", async () => {
  const oldClient = await rawRequest("GET /api/v1/health HTTP/1.0\r\n\r\n");
  expect([200, 400]).toContain(oldClient.status);
  for (const host of ["a", "ab", "abc", "a:1"]) {
    const answer = await get("/api/v1/health", host);
    expect({ host, status: answer.status }).toEqual({ host, status: 200 });
  }
  // A path that is not a route stays one, whatever the Host.
  expect((await get("/xx/api/v1/health", "a")).status).toBe(404);
});

test("a GET with a body is a 400: the body is never read, so a user_id in it would be ignored", async () => {
  const { token } = await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, {
    email: "raw@example.com",
    password: "raw-password-1234",
  });
  const body = JSON.stringify({ user_id: crypto.randomUUID() });
  const withBody = (framing: string, payload: string) =>
    rawRequest(
      `GET /api/v1/gdpr/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\n${framing}Connection: close\r\n\r\n${payload}`,
    );
  for (const answer of [
    await withBody(`Content-Length: ${body.length}\r\n`, body),
    await withBody("Transfer-Encoding: chunked\r\n", `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
  ]) {
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(JSON.parse(answer.body).errors).toEqual([
      {
        field: "body",
        message: "a GET or HEAD request takes no body: send its parameters in the query string",
      },
    ]);
  }
  // Nothing was exported: the export of the caller's own data would be recorded as a request.
  const requests = await callServer<{ total: number }>(server, "GET", "/api/v1/gdpr/requests", token);
  expect(requests.total).toBe(0);
  // Without a body (or with an empty one) the export is answered.
  const plain = await withBody("Content-Length: 0\r\n", "");
  expect(plain.status).toBe(200);
});

test("a short Host does not move sign-in out of the per-address budget", async () => {
  await server.stop();
  server = await start(3);
  port = Number(new URL(server.url).port);
  const { token } = await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, {
    email: "raw@example.com",
    password: "raw-password-1234",
  });
  const body = JSON.stringify({ email: "raw@example.com", password: "wrong-password-123" });
  const signInAs = (path: string) =>
    rawRequest(
      `POST ${path} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
  // Once routed as a sign-in (a password checked under the token's larger budget); now no route at all.
  expect((await signInAs("/xx/api/v1/auth/login")).status).toBe(404);
  // The real sign-in path, with a short Host and a token attached, is still limited per address: the
  // sign-in above used one of the 3 a minute.
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) statuses.push((await signInAs("/api/v1/auth/login")).status);
  expect(statuses).toEqual([401, 401, 429]);
});
