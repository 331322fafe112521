/**
 * Benchmark baseline: the stack's own ceiling for a durable write. A raw Bun.serve that, for each request,
 * upserts one row into bun:sqlite (WAL, the given `synchronous`) in its own transaction and answers
 * after the commit, as a check-in that wrote one row would. Usage: baseline-upsert.ts <db path> <full|normal>
 */
import { Database } from "bun:sqlite";

const [path, synchronous] = process.argv.slice(2);
if (!path || (synchronous !== "full" && synchronous !== "normal"))
  throw new Error("usage: baseline-upsert.ts <db path> <full|normal>");
const db = new Database(path, { create: true, strict: true });
db.exec("PRAGMA journal_mode = WAL");
db.exec(`PRAGMA synchronous = ${synchronous.toUpperCase()}`);
db.exec("CREATE TABLE IF NOT EXISTS devices (id TEXT PRIMARY KEY, last_seen TEXT NOT NULL, facts TEXT)");
const upsert = db.prepare(
  "INSERT INTO devices (id, last_seen, facts) VALUES ($id, $lastSeen, $facts) ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, facts = excluded.facts",
);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const body = (await request.json()) as { facts?: unknown };
    upsert.run({
      id: request.headers.get("authorization") ?? "",
      lastSeen: new Date().toISOString(),
      facts: JSON.stringify(body.facts ?? null),
    });
    return Response.json({ status: "online" });
  },
});
console.log(`listening on http://127.0.0.1:${server.port}`);
