/**
 * Benchmark baseline: the stack's own ceiling for a durable write on PostgreSQL, as baseline-upsert.ts is
 * for SQLite. A raw Bun.serve that, for each request, upserts one row with one statement on a Bun.sql
 * pool of `pool size` connections (its own transaction, committed before the answer, at the server's
 * `synchronous_commit`), and answers after the commit, as a check-in that wrote one row would.
 * Usage: baseline-upsert-pg.ts <postgres URL> <pool size>
 */
import { SQL } from "bun";

const [url, poolSize] = process.argv.slice(2);
if (!url || !Number(poolSize)) throw new Error("usage: baseline-upsert-pg.ts <postgres URL> <pool size>");
const sql = new SQL(url, { max: Number(poolSize) });
await sql`CREATE TABLE IF NOT EXISTS raw_devices (id text PRIMARY KEY, last_seen text NOT NULL, facts json)`;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const body = (await request.json()) as { facts?: unknown };
    const id = request.headers.get("authorization") ?? "";
    const lastSeen = new Date().toISOString();
    const facts = JSON.stringify(body.facts ?? null);
    await sql`INSERT INTO raw_devices (id, last_seen, facts) VALUES (${id}, ${lastSeen}, ${facts}::json)
      ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, facts = excluded.facts`;
    return Response.json({ status: "online" });
  },
});
console.log(`listening on http://127.0.0.1:${server.port}`);
