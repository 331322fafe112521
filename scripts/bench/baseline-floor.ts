/**
 * Benchmark baseline: a floor for P1 and P6, less work than either request needs, written bare, against
 * the benchmark's own database. The raw JSON baseline does none of it, so it says what the HTTP server
 * can do, not what an authenticated, logged read can; this says more nearly the latter. It skips what
 * the API still requires (the device's policy, wipe and certificate, the rate limit), so the real floor
 * is lower than this one.
 *
 * - `GET /api/v1/devices/:id`: an HMAC-SHA256 bearer token checked once (node:crypto) and its claims
 *   kept, as Bulwark keeps a verified token's; then, in one read transaction of prepared statements, the
 *   session (not revoked), its user (not disabled, restricted or deleted) and the device of the user's
 *   organization; the row answered as JSON.
 * - `POST /api/v1/auth/login`: the body read and parsed, one indexed read of the (email, address) lockout,
 *   a 429 with Retry-After when it is locked (401 otherwise).
 *
 * Each answer has a request id and a JSON log line; lines are written once per event-loop turn, as
 * Bulwark writes them. No rate limit, metrics, scopes, plan or MFA state, policy, wipe or certificate
 * reads, no input checks beyond parsing: what Bulwark does on top is what the ratio to this measures.
 *
 * Usage: baseline-floor.ts <db path> <token key, hex>. A token is `<base64url {"sid": ...}>.<base64url
 * HMAC-SHA256 of that part>` (floorToken).
 */
import { Database } from "bun:sqlite";
import { createHmac, timingSafeEqual } from "node:crypto";

/** The bearer token the floor accepts for session `sessionId`. */
export function floorToken(key: Buffer, sessionId: string): string {
  const claims = Buffer.from(JSON.stringify({ sid: sessionId })).toString("base64url");
  return `${claims}.${createHmac("sha256", key).update(claims).digest("base64url")}`;
}

if (import.meta.main) {
  const [path, keyHex] = process.argv.slice(2);
  if (!path || !keyHex) throw new Error("usage: baseline-floor.ts <db path> <token key, hex>");
  const key = Buffer.from(keyHex, "hex");
  const db = new Database(path, { strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  const begin = db.prepare("BEGIN");
  const commit = db.prepare("COMMIT");
  const session = db.prepare("SELECT user_id, revoked_at FROM sessions WHERE id = ?");
  const user = db.prepare(
    "SELECT organization_id FROM users WHERE id = ? AND NOT is_disabled AND NOT is_restricted AND deleted_at IS NULL",
  );
  const device = db.prepare("SELECT * FROM devices WHERE id = ? AND organization_id = ?");
  const lockout = db.prepare("SELECT locked_until FROM login_failures WHERE email = ? AND ip = ?");

  let pending: string[] = [];
  const log = (entry: Record<string, unknown>) => {
    if (pending.length === 0)
      setImmediate(() => {
        process.stdout.write(`${pending.join("\n")}\n`);
        pending = [];
      });
    pending.push(JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "request", ...entry }));
  };
  const answer = (status: number, body: string, route: string, started: number, extra = {}) => {
    const requestId = crypto.randomUUID();
    log({ route, status, duration_ms: performance.now() - started, request_id: requestId });
    return new Response(body, {
      status,
      headers: { "content-type": "application/json", "x-request-id": requestId, ...extra },
    });
  };

  const verified = new Map<string, string>();
  /** The session id of a token signed with the key, checked once per token; null for any other. */
  const sessionOf = (token: string): string | null => {
    const known = verified.get(token);
    if (known) return known;
    const [claims = "", signature = ""] = token.split(".");
    const expected = createHmac("sha256", key).update(claims).digest();
    const given = Buffer.from(signature, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const { sid } = JSON.parse(Buffer.from(claims, "base64url").toString()) as { sid: string };
    verified.set(token, sid);
    return sid;
  };

  const readDevice = (request: Request, started: number) => {
    const route = "/api/v1/devices/:id";
    const sid = sessionOf((request.headers.get("authorization") ?? "").slice(7));
    if (!sid) return answer(401, '{"code":401}', route, started);
    const id = new URL(request.url).pathname.slice("/api/v1/devices/".length);
    begin.run();
    let row: unknown = null;
    try {
      const live = session.get(sid) as { user_id: string; revoked_at: string | null } | null;
      const holder =
        live && !live.revoked_at ? (user.get(live.user_id) as { organization_id: string } | null) : null;
      row = holder ? device.get(id, holder.organization_id) : null;
    } finally {
      commit.run();
    }
    return row
      ? answer(200, JSON.stringify(row), route, started)
      : answer(404, '{"code":404}', route, started);
  };

  const refuseSignIn = async (request: Request, started: number) => {
    const route = "/api/v1/auth/login";
    const { email } = JSON.parse(await request.text()) as { email: string };
    const ip = server.requestIP(request)?.address ?? "";
    const lock = lockout.get(email.toLowerCase(), ip) as { locked_until: string | null } | null;
    return lock?.locked_until && lock.locked_until > new Date().toISOString()
      ? answer(429, '{"code":429,"reason":"login_throttled"}', route, started, { "retry-after": "900" })
      : answer(401, '{"code":401}', route, started);
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const started = performance.now();
      return request.method === "POST" ? refuseSignIn(request, started) : readDevice(request, started);
    },
  });
  console.log(`listening on http://127.0.0.1:${server.port}`);
}
