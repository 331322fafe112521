/**
 * `bulwark db copy` on the built executable: an installation populated through its API (two
 * organizations, users with a password and an authenticator app, policies with versions, devices enrolled
 * and checked in, one with a certificate, a wipe, a webhook with its secret and deliveries, an API key,
 * devices whose enrolled_at ties so that write order decides their place in filtered lists) is copied
 * SQLite -> PostgreSQL -> a new SQLite file, and the final file, served with the original key file,
 * answers as the original did. Refusals (a target with rows, a key that does not fit), an unreachable
 * or refusing server, and a failure part-way that leaves the PostgreSQL target without a row.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { migratePg } from "../../src/db/pg/migrate-pg";
import {
  buildBinary,
  callServer,
  expectOneLine,
  type RunningServer,
  runCommand,
  startServer,
} from "../helpers/binary";
import { type PgCluster, sharedPgCluster } from "../helpers/pg-cluster";
import { makeCsr, opensslVerify } from "../helpers/pki";
import { totpCode } from "../helpers/totp";
import { startWebhookReceiver, verifyBothSignatures } from "../helpers/webhook-receiver";

const ADMIN = { email: "owner@example.com", password: "copy-admin-password-1" };
const MEMBER = { email: "member@example.com", password: "copy-member-password-1" };
const SECOND_ADMIN = { email: "second@example.com", password: "copy-second-password-1" };
const WEBHOOK_SECRET = "copy-webhook-secret-0123456789";
const COPIER = { role: "bulwark_copier", password: "copier-password-7" };
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  BULWARK_VPN_ENDPOINT: "vpn.bulwark-test.net:51820",
};
/** Devices seeded with one enrolled_at: their order in a filtered list is their write order (rowid). */
const TIED_DEVICES = 5;
const TIED_AT = "2021-06-01T12:00:00.000Z";

const receiver = startWebhookReceiver();
const work = mkdtempSync(join(tmpdir(), "bulwark-db-copy-"));
/** The original installation: served from here, `data/bulwark.db` and its key beside it. */
const original = join(work, "original");
const originalDatabase = join(original, "data", "bulwark.db");
const originalKey = `${originalDatabase}.key`;
let binary = "";
let cluster: PgCluster;
let populated: Awaited<ReturnType<typeof populate>>;
/** What the API answered on the original installation, served once more after it was populated. */
let before: Awaited<ReturnType<typeof snapshotViews>>;
let stoppedAt = "";

const servers: RunningServer[] = [];
async function serve(folder: string): Promise<RunningServer> {
  const server = await startServer(binary, folder, ENV);
  servers.push(server);
  return server;
}

function run(args: string[], env: Record<string, string> = {}) {
  return runCommand(binary, args, work, env);
}

/** A PostgreSQL URL of a new, empty database owned by a role that signs in with a password. */
async function passwordDatabase(): Promise<{ url: string; host: string; database: string }> {
  const url = await cluster.createDatabase(COPIER.role);
  const database = url.split("/").at(-1) as string;
  return { url, host: `127.0.0.1:${cluster.port}`, database };
}

/** Every Bulwark table's row count in a PostgreSQL database (bulwark_migrations aside). */
async function pgRowCounts(url: string): Promise<Record<string, number>> {
  const sql = new SQL(url, { max: 1 });
  try {
    const tables = await sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_name <> 'bulwark_migrations' ORDER BY table_name`;
    const counts: Record<string, number> = {};
    for (const { name } of tables)
      counts[name] = Number((await sql.unsafe(`SELECT count(*) AS n FROM "${name}"`))[0].n);
    return counts;
  } finally {
    await sql.close();
  }
}

const COUNT_ROWS =
  "SELECT organization_id, status, platform, compliance_status, count FROM device_counts ORDER BY organization_id, status, platform, compliance_status";
const ORGANIZATION_COUNTS = "SELECT id, device_count, device_list_version FROM organizations ORDER BY id";

function sqliteRows(path: string, query: string): unknown[] {
  const database = new Database(path, { readonly: true });
  try {
    return database.query(query).all();
  } finally {
    database.close();
  }
}

async function pgRows(url: string, query: string): Promise<unknown[]> {
  const sql = new SQL(url, { max: 1 });
  try {
    return [...(await sql.unsafe(query))].map((row) => ({ ...row }));
  } finally {
    await sql.close();
  }
}

/**
 * Every row of every table as SQLite holds it, each table's rows in one order (by every column); JSON
 * text parsed, since PostgreSQL's jsonb keeps an object's keys in an order of its own. A NULL stays
 * NULL, apart from the text `null`.
 */
function everyRow(path: string): Record<string, unknown[]> {
  const database = new Database(path, { readonly: true });
  try {
    const tables = database
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'bulwark_migrations' ORDER BY name",
      )
      .all();
    const rows: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const columns = database.query(`SELECT * FROM "${name}" LIMIT 0`).columnNames;
      rows[name] = database
        .query<Record<string, unknown>, []>(
          `SELECT * FROM "${name}" ORDER BY ${columns.map((_, index) => index + 1).join(", ")}`,
        )
        .all()
        .map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([column, value]) => [
              column,
              typeof value === "string" && /^[[{]/.test(value) ? JSON.parse(value) : value,
            ]),
          ),
        );
    }
    return rows;
  } finally {
    database.close();
  }
}

/** The table of counts `db copy` prints: each table's name, source and target rows. */
function printedCounts(stdout: string): Record<string, [number, number]> {
  const counts: Record<string, [number, number]> = {};
  for (const match of stdout.matchAll(/^ {2}([a-z_]+) +([\d,]+) +([\d,]+)/gm))
    counts[match[1] as string] = [
      Number((match[2] as string).replaceAll(",", "")),
      Number((match[3] as string).replaceAll(",", "")),
    ];
  return counts;
}

async function login(server: RunningServer, who: { email: string; password: string }): Promise<string> {
  return (await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, who)).token;
}

/** A sign-in with a password and then the authenticator app's code. */
async function loginWithTotp(server: RunningServer, secret: string): Promise<string> {
  const first = await callServer(server, "POST", "/api/v1/auth/login", undefined, MEMBER);
  expect(first.mfa_required).toBe(true);
  // The next step's code: the current one may have been used already, and one step of drift is allowed.
  const verified = await callServer(server, "POST", "/api/v1/auth/mfa/verify", undefined, {
    mfa_token: first.mfa_token,
    method: "totp",
    code: totpCode(secret, new Date(), 1),
  });
  return verified.token;
}

/** Fills the original installation through the API as people and agents would. */
async function populate() {
  const server = await serve(original);
  const admin = await login(server, ADMIN);
  const second = run(
    [
      "admin",
      "create",
      "--email",
      SECOND_ADMIN.email,
      "--password",
      SECOND_ADMIN.password,
      "--org",
      "Second",
    ],
    { ...ENV, BULWARK_DATABASE_PATH: originalDatabase },
  );
  expect(second.code, second.stderr).toBe(0);
  const webhook = await callServer(server, "POST", "/api/v1/webhooks", admin, {
    url: receiver.url,
    events: ["*"],
    secret: WEBHOOK_SECRET,
  });
  await callServer(server, "POST", "/api/v1/users", admin, { ...MEMBER, name: "Member", role: "member" });
  const member = await login(server, MEMBER);
  const totp = await callServer(server, "POST", "/api/v1/auth/mfa/totp", member);
  await callServer(server, "POST", "/api/v1/auth/mfa/totp/confirm", member, {
    code: totpCode(totp.secret, new Date()),
  });
  const policy = await callServer(server, "POST", "/api/v1/policies", admin, {
    name: "Strict",
    policy_data: { dlp: { screenshot_allowed: false } },
  });
  await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, admin, {
    policy_data: { storage: { encryption_required: true } },
  });
  await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, admin, { description: "Version three" });
  const enrollment = await callServer(server, "POST", "/api/v1/enrollment-tokens", admin, {
    max_uses: null,
    policy_id: policy.id,
  });
  const devices = [];
  for (const [index, platform] of ["linux", "windows", "macos", "android"].entries()) {
    const enrolled = await callServer(server, "POST", "/api/v1/devices/enroll", undefined, {
      enrollment_token: enrollment.token,
      device_name: `Laptop ${index}`,
      platform,
      agent_version: "1.4.0",
      hardware_id: `copy-hw-${index}`,
      os_version: "14.4",
      ...(index === 0 ? { csr: makeCsr().csr } : {}),
    });
    await callServer(server, "POST", "/api/v1/agent/checkin", enrolled.device_token, {
      agent_version: "1.4.0",
      facts: { disk_encrypted: index % 2 === 0, firewall_enabled: true, screen_lock_enabled: true },
    });
    devices.push(enrolled);
  }
  // An iPhone without an agent: its key sealed with the key file until it fetches its profile.
  const phone = await callServer(server, "POST", "/api/v1/devices/phones", admin, {
    device_name: "Ana's iPhone",
    platform: "ios",
    policy_id: policy.id,
  });
  const wiped = devices[3];
  const wipe = await callServer(server, "POST", `/api/v1/devices/${wiped.id}/wipe`, admin, {
    reason: "lost",
  });
  await callServer(server, "POST", `/api/v1/agent/wipes/${wipe.wipe_id}/complete`, wiped.device_token, {
    success: true,
  });
  const apiKey = await callServer(server, "POST", "/api/v1/auth/api-keys", admin, {
    name: "inventory",
    scopes: ["devices:read"],
  });
  // Every event delivered (or given up) before the server stops: nothing left for the copy's server to send.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pending = await callServer(
      server,
      "GET",
      `/api/v1/webhooks/${webhook.id}/deliveries?status=pending`,
      admin,
    );
    if (pending.total === 0) break;
    if (Date.now() > deadline) throw new Error("webhook deliveries still pending");
    await Bun.sleep(100);
  }
  expect(await server.stop()).toBe(0);
  seedTiedDevices(devices[0].id);
  return {
    webhookId: webhook.id,
    policyId: policy.id,
    devices,
    phone: { id: phone.device.id as string, link: phone.profile_link.url as string },
    apiKey: apiKey.key,
    totpSecret: totp.secret,
  };
}

/**
 * SQL copies of an enrolled device with one enrolled_at and ids in the reverse of their write order (as
 * scripts/bench/seed-devices.ts seeds, through the database's own triggers): in a filtered list, which
 * breaks ties by rowid, they come newest-written first, an order that the ids alone would reverse.
 */
function seedTiedDevices(templateId: string): void {
  const database = new Database(originalDatabase, { strict: true });
  try {
    const columns = (database.query("PRAGMA table_info(devices)").all() as { name: string }[]).map(
      (column) => column.name,
    );
    const overrides: Record<string, string> = {
      id: "$id",
      device_name: "$name",
      hardware_id: "$name",
      vpn_address: "t.vpn_address + 100 + $n",
      vpn_public_key: "$key",
      status: "'online'",
      enrolled_at: `'${TIED_AT}'`,
      created_at: `'${TIED_AT}'`,
    };
    const insert = database.query(
      `INSERT INTO devices (${columns.join(", ")}) SELECT ${columns
        .map((column) => overrides[column] ?? `t.${column}`)
        .join(", ")} FROM devices t WHERE t.id = $template`,
    );
    database.transaction(() => {
      for (let n = 0; n < TIED_DEVICES; n++)
        insert.run({
          id: `00000000-0000-7000-8000-00000000000${TIED_DEVICES - n}`,
          name: `tied-${n}`,
          n,
          key: Buffer.alloc(32, n + 1).toString("base64"),
          template: templateId,
        });
      database
        .query(
          "UPDATE organizations SET device_count = device_count + ? WHERE id = (SELECT organization_id FROM devices WHERE id = ?)",
        )
        .run(TIED_DEVICES, templateId);
    })();
  } finally {
    database.close();
  }
}

/** What a user sees through the API, as comparable values. */
async function snapshotViews(server: RunningServer) {
  const admin = await login(server, ADMIN);
  const get = (path: string) => callServer(server, "GET", path, admin);
  const { devices, policyId, webhookId } = populated;
  const users = await get("/api/v1/users?page_size=100");
  const organization = await get("/api/v1/organizations/current");
  return {
    deviceList: await get("/api/v1/devices?page_size=100"),
    deviceListPage2: await get("/api/v1/devices?page_size=3&page=2"),
    onlineList: await get("/api/v1/devices?status=online&page_size=100"),
    linuxList: await get("/api/v1/devices?platform=linux&page_size=100"),
    summary: await get("/api/v1/devices/summary"),
    deviceDetails: await Promise.all(devices.map((device) => get(`/api/v1/devices/${device.id}`))),
    phone: await get(`/api/v1/devices/${populated.phone.id}`),
    deviceLogs: await Promise.all(
      devices.map((device) => get(`/api/v1/devices/${device.id}/logs?page_size=100`)),
    ),
    policy: await get(`/api/v1/policies/${policyId}`),
    policies: await get("/api/v1/policies?page_size=100"),
    history: await get(`/api/v1/policies/${policyId}/history?page_size=100`),
    firstVersion: await get(`/api/v1/policies/${policyId}/versions/1`),
    webhook: await get(`/api/v1/webhooks/${webhookId}`),
    deliveries: await get(`/api/v1/webhooks/${webhookId}/deliveries?page_size=100`),
    organization,
    // Signing in sets last_login_at: compared without it.
    users: users.data.map(({ last_login_at: _, ...user }: Record<string, unknown>) => user),
    enrollmentTokens: await get("/api/v1/enrollment-tokens?page_size=100"),
    apiKeys: await get("/api/v1/auth/api-keys"),
    caPem: await (await fetch(`${server.url}/api/v1/agent/ca.pem?organization_id=${organization.id}`)).text(),
    audit: await get("/api/v1/audit-logs?page_size=100"),
  };
}

beforeAll(async () => {
  binary = await buildBinary();
  cluster = await sharedPgCluster();
  // The role signs in with its password (SCRAM), ahead of the cluster's trust rule for loopback.
  await cluster.createPasswordRole(COPIER.role, COPIER.password);

  mkdirSync(original, { recursive: true });
  populated = await populate();
  const again = await serve(original);
  before = await snapshotViews(again);
  expect(await again.stop()).toBe(0);
  stoppedAt = new Date().toISOString();
}, 180_000);

afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  receiver.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("bulwark db copy", () => {
  test("SQLite -> PostgreSQL -> a new SQLite file: served with the original key file, it answers as the original did", async () => {
    const vpnExport = run(["vpn", "server-config"], { ...ENV, BULWARK_DATABASE_PATH: originalDatabase });
    expect(vpnExport.code, vpnExport.stderr).toBe(0);
    const pg = await passwordDatabase();
    const pgUrl = pg.url.replace("postgres@", `${COPIER.role}:${COPIER.password}@`);

    const toPg = run(["db", "copy", "--from", originalDatabase, "--to", pgUrl]);
    expect(toPg.code, toPg.stderr).toBe(0);
    expect(toPg.stderr).toBe("");
    expect(toPg.stdout).not.toContain(COPIER.password);
    const toPgCounts = printedCounts(toPg.stdout);
    expect(Object.keys(toPgCounts)).toHaveLength(38);
    for (const [table, [source, target]] of Object.entries(toPgCounts))
      expect({ table, target }).toEqual({ table, target: source });
    expect(toPgCounts.devices?.[0]).toBe(5 + TIED_DEVICES);
    expect(toPgCounts.phone_enrollments?.[0]).toBe(1);
    expect(toPgCounts.phone_profile_links?.[0]).toBe(1);
    expect(toPgCounts.webhook_deliveries?.[0]).toBeGreaterThan(5);
    expect(toPg.stdout).toContain("Row counts match in all 38 tables");
    expect(toPg.stdout).toContain(`The key file ${originalKey} opens the secrets sealed in the copy`);
    expect(toPg.stdout).toContain(
      `are sealed with ${originalKey}: every server on this database needs that key file`,
    );
    // What the triggers keep, on PostgreSQL, row for row as on SQLite.
    expect(await pgRows(pg.url, COUNT_ROWS)).toEqual(sqliteRows(originalDatabase, COUNT_ROWS));
    expect(await pgRows(pg.url, ORGANIZATION_COUNTS)).toEqual(
      sqliteRows(originalDatabase, ORGANIZATION_COUNTS),
    );

    // JSON arrives as documents PostgreSQL can look into, not as strings holding JSON text.
    expect(
      await pgRows(
        pg.url,
        "SELECT json_typeof(facts) AS facts, count(*)::int AS devices FROM devices WHERE facts IS NOT NULL GROUP BY 1",
      ),
    ).toEqual([{ facts: "object", devices: expect.any(Number) }]);

    // Back out of PostgreSQL, the password from PGPASSWORD, the key named since the source has none beside it.
    const final = join(work, "final");
    const finalDatabase = join(final, "data", "bulwark.db");
    const noKey = run(
      ["db", "copy", "--from", pg.url.replace("postgres@", `${COPIER.role}@`), "--to", finalDatabase],
      {
        PGPASSWORD: COPIER.password,
      },
    );
    expect(noKey.code).toBe(2);
    expectOneLine(
      noKey.stderr,
      "the source is PostgreSQL: name the key file that seals its secrets with --key-file",
    );
    const back = run(
      [
        "db",
        "copy",
        "--from",
        pg.url.replace("postgres@", `${COPIER.role}@`),
        "--to",
        finalDatabase,
        "--key-file",
        originalKey,
      ],
      { PGPASSWORD: COPIER.password },
    );
    expect(back.code, back.stderr).toBe(0);
    for (const [table, [source, target]] of Object.entries(printedCounts(back.stdout)))
      expect({ table, source, target }).toEqual({
        table,
        source: toPgCounts[table]?.[0] ?? -1,
        target: source,
      });
    expect(readFileSync(`${finalDatabase}.key`, "utf8")).toBe(readFileSync(originalKey, "utf8"));
    expect(statSync(`${finalDatabase}.key`).mode & 0o777).toBe(0o600);
    // Row for row, value for value, after two copies.
    expect(everyRow(finalDatabase)).toEqual(everyRow(originalDatabase));

    const server = await serve(final);
    const after = await snapshotViews(server);
    // The phone's sealed key came through both copies: its one-time link serves its profile there.
    const profile = await fetch(`${server.url}${new URL(populated.phone.link).pathname}?install=1`);
    expect(profile.status).toBe(200);
    expect(profile.headers.get("content-type")).toBe("application/x-apple-aspen-config");
    const { audit: auditBefore, ...restBefore } = before;
    const { audit: auditAfter, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
    // The final server's own sign-in is audited; everything before the copy is as it was.
    const copied = auditAfter.data.filter((entry: { timestamp: string }) => entry.timestamp < stoppedAt);
    expect(copied).toEqual(auditBefore.data);
    // Write order survived two copies: the tied devices come newest-written first in a filtered list.
    const tied = after.onlineList.data
      .filter((device: { enrolled_at: string }) => device.enrolled_at === TIED_AT)
      .map((device: { device_name: string }) => device.device_name);
    expect(tied).toEqual(Array.from({ length: TIED_DEVICES }, (_, n) => `tied-${TIED_DEVICES - 1 - n}`));

    // The same password, the authenticator app (its secret sealed with the key), the API key.
    await loginWithTotp(server, populated.totpSecret);
    const viaKey = await callServer(server, "GET", "/api/v1/devices?page_size=1", populated.apiKey);
    expect(viaKey.total).toBe(before.deviceList.total);
    // A test delivery is signed with the same webhook secret.
    const admin = await login(server, ADMIN);
    const sent = await callServer(server, "POST", `/api/v1/webhooks/${populated.webhookId}/test`, admin);
    const deadline = Date.now() + 15_000;
    while (
      !receiver.received.some((request) => request.payload.id === sent.event_id) &&
      Date.now() < deadline
    )
      await Bun.sleep(50);
    const delivered = receiver.received.find((request) => request.payload.id === sent.event_id);
    expect(delivered).toBeDefined();
    expect(await verifyBothSignatures(delivered as NonNullable<typeof delivered>, WEBHOOK_SECRET)).toBe(true);
    // The device CA's key opens: a renewed certificate verifies against the original CA certificate.
    const renewed = await callServer(
      server,
      "POST",
      "/api/v1/agent/certificate",
      populated.devices[0].device_token,
      {
        csr: makeCsr().csr,
      },
    );
    expect(opensslVerify(before.caPem, renewed.device_certificate).ok).toBe(true);
    expect(await server.stop()).toBe(0);
    // The VPN server's private key opens: the export is the original's, key included.
    const finalExport = run(["vpn", "server-config"], { ...ENV, BULWARK_DATABASE_PATH: finalDatabase });
    expect(finalExport.code, finalExport.stderr).toBe(0);
    expect(finalExport.stdout).toContain("PrivateKey = ");
    expect(finalExport.stdout).toBe(vpnExport.stdout);
  }, 180_000);

  test("refuses a target that holds rows, a key file that does not open the source's secrets, a missing source, another store; nothing changes", async () => {
    const pgUrl = await cluster.createDatabase();
    expect(run(["db", "copy", "--from", originalDatabase, "--to", pgUrl]).code).toBe(0);
    const pgBefore = await pgRowCounts(pgUrl);
    const again = run(["db", "copy", "--from", originalDatabase, "--to", pgUrl]);
    expect(again.code).toBe(2);
    expectOneLine(again.stderr, "is not empty (table organizations has rows)");
    expect(await pgRowCounts(pgUrl)).toEqual(pgBefore);

    const file = join(work, "refusals", "copy.db");
    expect(run(["db", "copy", "--from", originalDatabase, "--to", file]).code).toBe(0);
    const digest = () => createHash("sha256").update(readFileSync(file)).digest("hex");
    const fileBefore = digest();
    const overFile = run(["db", "copy", "--from", pgUrl, "--to", file, "--key-file", originalKey]);
    expect(overFile.code).toBe(2);
    expectOneLine(overFile.stderr, `${file} is not empty (table organizations has rows)`);
    expect(digest()).toBe(fileBefore);

    const otherKey = join(work, "refusals", "other.key");
    writeFileSync(otherKey, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const fresh = join(work, "refusals", "fresh.db");
    const wrongKey = run(["db", "copy", "--from", originalDatabase, "--to", fresh, "--key-file", otherKey]);
    expect(wrongKey.code).toBe(2);
    expectOneLine(wrongKey.stderr, `${otherKey} does not open the secrets sealed in ${originalDatabase}`);
    expect(() => statSync(fresh)).toThrow();

    const missing = run(["db", "copy", "--from", join(work, "refusals", "missing.db"), "--to", fresh]);
    expect(missing.code).toBe(2);
    expectOneLine(missing.stderr, "missing.db does not exist");
    const otherStore = run([
      "db",
      "copy",
      "--from",
      originalDatabase,
      "--to",
      "mysql://bulwark@localhost/bulwark",
    ]);
    expect(otherStore.code).toBe(2);
    expectOneLine(otherStore.stderr, "mysql:// is not a store db copy knows");
    expect(() => statSync(fresh)).toThrow();
    expect(() => statSync(join(work, "mysql:"))).toThrow();
  }, 120_000);

  test("a server that cannot be reached or refuses the sign-in is one line naming it and the cause", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const unreachable = run([
      "db",
      "copy",
      "--from",
      originalDatabase,
      "--to",
      `postgres://bulwark@127.0.0.1:${port}/bulwark`,
    ]);
    expect(unreachable.code).toBe(1);
    expectOneLine(unreachable.stderr, `cannot connect to PostgreSQL at 127.0.0.1:${port}`);
    expect(unreachable.stderr).toContain("connection refused");

    const pg = await passwordDatabase();
    const wrongPassword = run([
      "db",
      "copy",
      "--from",
      originalDatabase,
      "--to",
      pg.url.replace("postgres@", `${COPIER.role}:not-the-password@`),
    ]);
    expect(wrongPassword.code).toBe(1);
    expectOneLine(wrongPassword.stderr, `cannot connect to PostgreSQL at ${pg.host}`);
    expect(wrongPassword.stderr).toContain(`password authentication failed for user "${COPIER.role}"`);
    expect(wrongPassword.stderr).not.toContain("not-the-password");
  }, 60_000);

  test("a failure part-way leaves the PostgreSQL target without a Bulwark row, and a second run can succeed", async () => {
    const pgUrl = await cluster.createDatabase();
    const sql = new SQL(pgUrl, { max: 1 });
    try {
      // The target as an operator might have prepared it, with a rule the original's wipe breaks.
      await migratePg(sql);
      await sql.unsafe("ALTER TABLE wipes ADD CONSTRAINT wipes_not_lost CHECK (reason <> 'lost')");
      const failed = run(["db", "copy", "--from", originalDatabase, "--to", pgUrl]);
      expect(failed.code).toBe(1);
      expectOneLine(
        failed.stderr,
        'copying wipes failed after 0 of 1 rows: new row for relation "wipes" violates check constraint "wipes_not_lost"',
      );
      expect(failed.stderr).toContain("holds no Bulwark rows");
      const counts = await pgRowCounts(pgUrl);
      expect(Object.keys(counts).length).toBe(38);
      expect(Object.values(counts).every((rows) => rows === 0)).toBe(true);

      await sql.unsafe("ALTER TABLE wipes DROP CONSTRAINT wipes_not_lost");
      const retried = run(["db", "copy", "--from", originalDatabase, "--to", pgUrl]);
      expect(retried.code, retried.stderr).toBe(0);
      expect((await pgRowCounts(pgUrl)).wipes).toBe(1);
    } finally {
      await sql.close();
    }
  }, 60_000);
});
