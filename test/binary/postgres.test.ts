/**
 * What an operator runs on PostgreSQL (`database.url`), on the built executable and the throwaway
 * cluster: `migrate` on an empty database and again, `serve` signing in with the password of
 * `database.password_file` and reporting its store, `admin create` and a sign-in through the API, a
 * second server on the same database with the same key file; and the refusals: `backup`/`restore`
 * (pg_dump's and pg_restore's job), an unreachable server, a wrong password, another key file, and
 * `config check`'s rules for `database.url`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import {
  buildBinary,
  callServer,
  expectOneLine,
  type RunningServer,
  runCommand,
  startServer,
} from "../helpers/binary";
import { type PgCluster, sharedPgCluster } from "../helpers/pg-cluster";

/** The role the installations sign in as: with its password only (SCRAM), never by trust. */
const ROLE = { name: "bulwark_app", password: "app-database-password-5" };
const ADMIN = { email: "ops@example.com", password: "correct-horse-battery" };

let binary = "";
let cluster: PgCluster;
const work = mkdtempSync(join(tmpdir(), "bulwark-postgres-"));
const servers: RunningServer[] = [];

beforeAll(async () => {
  binary = await buildBinary();
  cluster = await sharedPgCluster();
  await cluster.createPasswordRole(ROLE.name, ROLE.password);
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

let installations = 0;

/**
 * A new installation on PostgreSQL: a folder to run the executable from, an empty database owned by
 * the role, and the settings that point at it (the password in a file, the key file in the folder).
 */
async function installation() {
  const folder = join(work, `installation-${++installations}`);
  const passwordFile = join(folder, "database-password");
  const database = (await cluster.createDatabase(ROLE.name)).split("/").at(-1) as string;
  mkdirSync(folder);
  writeFileSync(passwordFile, `${ROLE.password}\n`, { mode: 0o600 });
  const env = {
    BULWARK_DATABASE_URL: `postgres://${ROLE.name}@127.0.0.1:${cluster.port}/${database}`,
    BULWARK_DATABASE_PASSWORD_FILE: passwordFile,
    BULWARK_DATABASE_KEY_FILE: join(folder, "bulwark.key"),
  };
  return { folder, database, env };
}

function run(args: string[], folder: string, env: Record<string, string>) {
  return runCommand(binary, args, folder, env);
}

async function serve(folder: string, env: Record<string, string>): Promise<RunningServer> {
  const server = await startServer(binary, folder, env);
  servers.push(server);
  return server;
}

/** `serve` that is expected to stop by itself: its exit code and output (killed after 30 s if not). */
async function serveUntilItStops(folder: string, env: Record<string, string>) {
  const child = Bun.spawn([binary, "serve"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", HOME: folder, BULWARK_SERVER_PORT: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

async function signIn(server: RunningServer, credentials = ADMIN): Promise<string> {
  const login = await callServer(server, "POST", "/api/v1/auth/login", undefined, credentials);
  return login.token as string;
}

/** A port on 127.0.0.1 that nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const listener = createServer().listen(0, "127.0.0.1", () => {
      const { port } = listener.address() as { port: number };
      listener.close(() => resolve(port));
    });
  });
}

/** A query on the database as the cluster's superuser. */
async function query(database: string, text: string): Promise<Record<string, unknown>[]> {
  const sql = new SQL(cluster.url.replace(/\/postgres$/, `/${database}`), { max: 1 });
  try {
    return [...(await sql.unsafe(text))];
  } finally {
    await sql.close();
  }
}

describe("bulwark on PostgreSQL", () => {
  test("migrate applies every migration to an empty database, then finds it up to date; nothing is written to the SQLite path", async () => {
    const { folder, database, env } = await installation();
    const first = run(["migrate"], folder, env);
    expect(first.code, first.stderr).toBe(0);
    const applied = /^Applied (\d+) migration\(s\): \S/.exec(first.stdout);
    expect(applied, first.stdout).not.toBeNull();
    const count = Number(applied?.[1]);
    expect(await query(database, "SELECT count(*)::int AS n FROM bulwark_migrations")).toEqual([
      { n: count },
    ]);
    expect(await query(database, "SELECT count(*)::int AS n FROM organizations")).toEqual([{ n: 0 }]);

    const again = run(["migrate"], folder, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(`Database is up to date (${count} migration(s))`);
    expect(existsSync(join(folder, "data"))).toBe(false);
  }, 60_000);

  test("serve signs in with the password of database.password_file and reports store postgresql; a wrong password stops it with one line", async () => {
    const { folder, database, env } = await installation();
    const wrongPassword = join(folder, "wrong-password");
    writeFileSync(wrongPassword, "not-the-password\n", { mode: 0o600 });
    const refused = await serveUntilItStops(folder, {
      ...env,
      BULWARK_DATABASE_PASSWORD_FILE: wrongPassword,
    });
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr, `password authentication failed for user "${ROLE.name}"`);
    expect(refused.stderr).toContain(`127.0.0.1:${cluster.port}`);

    const server = await serve(folder, env);
    const health = await fetch(`${server.url}/api/v1/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", database: "ok", store: "postgresql" });
    // The start line names the database served, without the password; nothing is printed with it.
    const started = server
      .output()
      .split("\n")
      .map((line) => (line.startsWith("{") ? JSON.parse(line) : null))
      .find((line) => line?.msg?.includes(" listening on "));
    expect(started?.database).toBe(`postgresql://${ROLE.name}@127.0.0.1:${cluster.port}/${database}`);
    expect(server.output()).not.toContain(ROLE.password);
    // The first start's own admin is in PostgreSQL, not in a SQLite file.
    expect(await query(database, "SELECT count(*)::int AS n FROM users")).toEqual([{ n: 1 }]);
    expect(existsSync(join(folder, "data"))).toBe(false);
  }, 60_000);

  test("admin create makes an organization and its admin, who then signs in through the API", async () => {
    const { folder, env } = await installation();
    const server = await serve(folder, env);
    const adminPassword = join(folder, "admin-password");
    writeFileSync(adminPassword, ADMIN.password, { mode: 0o600 });
    const created = run(
      ["admin", "create", "--email", ADMIN.email, "--password-file", adminPassword, "--org", "Acme"],
      folder,
      env,
    );
    expect(created.code, created.stderr).toBe(0);

    const token = await signIn(server);
    const me = await callServer(server, "GET", "/api/v1/users/me", token);
    expect(me).toMatchObject({ email: ADMIN.email, role: "admin" });
    const organization = await callServer(server, "GET", "/api/v1/organizations/current", token);
    expect(organization.name).toBe("Acme");
  }, 60_000);

  test("a second server on the same database needs the same key file: another one is refused, naming it", async () => {
    const { folder, env, database } = await installation();
    const first = await serve(folder, env);
    const adminPassword = join(folder, "admin-password");
    writeFileSync(adminPassword, ADMIN.password, { mode: 0o600 });
    expect(
      run(
        ["admin", "create", "--email", ADMIN.email, "--password-file", adminPassword, "--org", "Acme"],
        folder,
        env,
      ).code,
    ).toBe(0);

    const label = `postgresql://${ROLE.name}@127.0.0.1:${cluster.port}/${database}`;
    const otherKey = join(folder, "other.key");
    writeFileSync(otherKey, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const refused = await serveUntilItStops(folder, { ...env, BULWARK_DATABASE_KEY_FILE: otherKey });
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr, `${otherKey} does not open the secrets sealed in ${label}`);
    // Without a key file, it is refused too, and writes no new key there.
    const missingKey = join(folder, "missing.key");
    const missing = await serveUntilItStops(folder, { ...env, BULWARK_DATABASE_KEY_FILE: missingKey });
    expect(missing.code).toBe(1);
    expectOneLine(
      missing.stderr,
      `${missingKey} does not exist, and ${label} holds secrets sealed with another key`,
    );
    expect(existsSync(missingKey)).toBe(false);

    // With the same key file, a second server runs beside the first and signs the same admin in.
    const second = await serve(folder, env);
    expect(second.url).not.toBe(first.url);
    expect(await callServer(second, "GET", "/api/v1/users/me", await signIn(second))).toMatchObject({
      email: ADMIN.email,
    });
  }, 60_000);

  test("with vpn.server_public_key set, so that no VPN key is sealed, a second server with another key file is still refused", async () => {
    const { folder, env, database } = await installation();
    const external = { ...env, BULWARK_VPN_SERVER_PUBLIC_KEY: randomBytes(32).toString("base64") };
    await serve(folder, external);
    const label = `postgresql://${ROLE.name}@127.0.0.1:${cluster.port}/${database}`;
    // A second host given no key file: it would make its own, and seal with it what the first cannot open.
    const missingKey = join(folder, "second-host.key");
    const missing = await serveUntilItStops(folder, { ...external, BULWARK_DATABASE_KEY_FILE: missingKey });
    expect(missing.code).toBe(1);
    expectOneLine(
      missing.stderr,
      `${missingKey} does not exist, and ${label} holds secrets sealed with another key`,
    );
    expect(existsSync(missingKey)).toBe(false);
  }, 60_000);

  test("backup and restore exit 2 and point to pg_dump and pg_restore", async () => {
    const { folder, env } = await installation();
    const backup = run(["backup", join(folder, "bulwark.dump")], folder, env);
    expect(backup.code).toBe(2);
    expectOneLine(
      backup.stderr,
      "database.url is PostgreSQL: back it up with pg_dump (pg_dump --format=custom",
    );
    expect(existsSync(join(folder, "bulwark.dump"))).toBe(false);
    const restore = run(["restore", join(folder, "bulwark.dump")], folder, env);
    expect(restore.code).toBe(2);
    expectOneLine(restore.stderr, "restore it with pg_restore (pg_restore --clean --if-exists");
  });

  test("an unreachable server stops serve with one line naming host:port and the refused connection", async () => {
    const { folder, env } = await installation();
    const port = await closedPort();
    const stopped = await serveUntilItStops(folder, {
      ...env,
      BULWARK_DATABASE_URL: `postgres://${ROLE.name}@127.0.0.1:${port}/bulwark`,
    });
    expect(stopped.code).toBe(1);
    expectOneLine(stopped.stderr, `cannot connect to PostgreSQL at 127.0.0.1:${port}`);
    expect(stopped.stderr).toContain("connection refused");
  }, 60_000);

  test("config check refuses a url that is not PostgreSQL's (its password masked) and a url without key_file", async () => {
    const { folder, env } = await installation();
    const notPostgres = run(["config", "check"], folder, {
      ...env,
      BULWARK_DATABASE_URL: "mysql://bulwark:hunter2-secret@db.example.com/bulwark",
    });
    expect(notPostgres.code).toBe(1);
    expectOneLine(
      notPostgres.stderr,
      'invalid config database.url: "mysql://bulwark:***@db.example.com/bulwark" is not a PostgreSQL URL',
    );
    expect(notPostgres.stderr).not.toContain("hunter2-secret");

    const { BULWARK_DATABASE_KEY_FILE: _, ...withoutKeyFile } = env;
    const noKeyFile = run(["config", "check"], folder, withoutKeyFile);
    expect(noKeyFile.code).toBe(1);
    expectOneLine(noKeyFile.stderr, "invalid config database.key_file: required with database.url");

    // A URL holding its password passes, and the password is not printed.
    const withPassword = `postgres://${ROLE.name}:${ROLE.password}@127.0.0.1:${cluster.port}/bulwark`;
    const { BULWARK_DATABASE_PASSWORD_FILE: __, ...withoutPasswordFile } = env;
    const valid = run(["config", "check"], folder, {
      ...withoutPasswordFile,
      BULWARK_DATABASE_URL: withPassword,
    });
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain(
      `url = "postgres://${ROLE.name}:***@127.0.0.1:${cluster.port}/bulwark"  # env BULWARK_DATABASE_URL, password masked`,
    );
    expect(valid.stdout + valid.stderr).not.toContain(ROLE.password);
  });
});
