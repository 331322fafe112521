/**
 * Grows a benchmark database fast: SQL copies of one device enrolled through the API, each with its own
 * id, name, hardware id, VPN address and key, spread over platforms, statuses and compliance states and
 * enrolled a second apart. The database's triggers and indexes see ordinary inserts, so every count the
 * service keeps stays true. Run while the server is stopped.
 */
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";

const PLATFORMS = ["linux", "windows", "macos", "android", "ios"];

/** Seeded device tokens are this prefix and the device's number (1 to `tokenCount` - 1 get one). */
export const BENCH_TOKEN_PREFIX = "bwd_bench_";

function benchDeviceToken(index: number): string {
  return `${BENCH_TOKEN_PREFIX}${index}`;
}

/** The id of the `index`th seeded device: a valid UUID, so the API accepts it in a path. */
export function benchDeviceId(index: number): string {
  return `00000000-0000-7000-8000-${index.toString(16).padStart(12, "0")}`;
}

export function seedDevices(options: {
  path: string;
  templateDeviceId: string;
  /** Seeded devices are numbered; this run adds [from, to). */
  from: number;
  to: number;
  tokenCount: number;
}): void {
  const db = new Database(options.path, { strict: true });
  db.exec("PRAGMA synchronous = OFF");
  const columns = (db.query("PRAGMA table_info(devices)").all() as { name: string }[]).map(
    (column) => column.name,
  );
  const now = new Date();
  const recent = now.toISOString();
  const old = new Date(now.getTime() - 2 * 86_400_000).toISOString();
  const overrides: Record<string, string> = {
    id: "printf('00000000-0000-7000-8000-%012x', n.i)",
    device_name: "'bench-' || n.i",
    hardware_id: "'bench-hw-' || n.i",
    platform: `CASE n.i % 5 ${PLATFORMS.map((platform, index) => `WHEN ${index} THEN '${platform}'`).join(" ")} END`,
    // A third offline; the rest online.
    status: "CASE WHEN n.i % 3 = 0 THEN 'offline' ELSE 'online' END",
    last_seen: `CASE WHEN n.i % 3 = 0 THEN '${old}' ELSE '${recent}' END`,
    compliance_status: "CASE n.i % 10 WHEN 0 THEN 'non_compliant' WHEN 1 THEN 'unknown' ELSE 'compliant' END",
    compliance_stale: "0",
    // Newest first is the template, then 1, 2, ...: enrolled a second apart, older as n grows.
    enrolled_at: "strftime('%Y-%m-%dT%H:%M:%fZ', t.enrolled_at, '-' || n.i || ' seconds')",
    created_at: "strftime('%Y-%m-%dT%H:%M:%fZ', t.enrolled_at, '-' || n.i || ' seconds')",
    vpn_address: "t.vpn_address + n.i",
    vpn_public_key: "printf('bench%038d=', n.i)",
  };
  const select = columns.map((column) => overrides[column] ?? `t.${column}`).join(", ");
  const organization = db
    .query("SELECT organization_id AS organizationId FROM devices WHERE id = ?")
    .get(options.templateDeviceId) as { organizationId: string } | null;
  if (!organization) throw new Error(`no template device ${options.templateDeviceId}`);
  db.transaction(() => {
    db.query(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO devices (${columns.join(", ")}) SELECT ${select} FROM n, devices t WHERE t.id = ?`,
    ).run(options.from, options.to - 1, options.templateDeviceId);
    db.query("UPDATE organizations SET device_count = device_count + ? WHERE id = ?").run(
      options.to - options.from,
      organization.organizationId,
    );
    const insertToken = db.query(
      "INSERT INTO device_tokens (id, device_id, token_hash, expires_at, revoked_at, created_at) VALUES (?, ?, ?, ?, NULL, ?)",
    );
    const expires = new Date(now.getTime() + 365 * 86_400_000).toISOString();
    for (let index = options.from; index < Math.min(options.to, options.tokenCount); index++) {
      const hash = createHash("sha256").update(benchDeviceToken(index)).digest("hex");
      insertToken.run(crypto.randomUUID(), benchDeviceId(index), hash, expires, recent);
    }
  })();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}
