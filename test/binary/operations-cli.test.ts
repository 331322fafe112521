/**
 * The operator's commands, run as an operator runs them, on the built executable: backup while serving
 * and restore with the server stopped, the refusals that protect a database, and `config check` /
 * `config example`.
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "smol-toml";
import { buildBinary, callServer, expectOneLine, runCommand, startServer } from "../helpers/binary";

let binary: string;
beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

const ADMIN = { BULWARK_ADMIN_EMAIL: "ops@example.com", BULWARK_ADMIN_PASSWORD: "correct-horse-battery" };

function emptyFolder(): string {
  return mkdtempSync(join(tmpdir(), "bulwark-ops-"));
}

function run(args: string[], cwd: string, env: Record<string, string> = {}) {
  return runCommand(binary, args, cwd, env);
}

async function userEmails(url: string): Promise<string[]> {
  const server = { url } as Parameters<typeof callServer>[0];
  const login = await callServer(server, "POST", "/api/v1/auth/login", undefined, {
    email: ADMIN.BULWARK_ADMIN_EMAIL,
    password: ADMIN.BULWARK_ADMIN_PASSWORD,
  });
  const users = await callServer(server, "GET", "/api/v1/users?page_size=100", login.token);
  return users.data.map((user: { email: string }) => user.email).sort();
}

async function createUser(url: string, email: string) {
  const server = { url } as Parameters<typeof callServer>[0];
  const login = await callServer(server, "POST", "/api/v1/auth/login", undefined, {
    email: ADMIN.BULWARK_ADMIN_EMAIL,
    password: ADMIN.BULWARK_ADMIN_PASSWORD,
  });
  await callServer(server, "POST", "/api/v1/users", login.token, {
    email,
    name: email,
    role: "member",
    password: "another-long-password",
  });
}

describe("bulwark restore", () => {
  test("round trip: a backup made while serving is restored with the server stopped; the replaced database is kept", async () => {
    const folder = emptyFolder();
    const server = await startServer(binary, folder, ADMIN);
    await createUser(server.url, "before-backup@example.com");
    const backupFile = join(folder, "nightly.db");
    const backup = run(["backup", backupFile], folder);
    expect(backup.code, backup.stderr).toBe(0);
    await createUser(server.url, "after-backup@example.com");

    // While serving, restore refuses: the server would keep writing to the file it has open.
    const whileServing = run(["restore", backupFile], folder);
    expect(whileServing.code).toBe(1);
    expectOneLine(whileServing.stderr, `is already served by process ${server.process.pid}`);
    expect(await server.stop()).toBe(0);

    const restored = run(["restore", backupFile], folder);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toContain(`Restored ${backupFile} (schema version `);
    expect(restored.stdout).toContain("kept as ./data/bulwark.db.before-restore");
    const kept = new Database(join(folder, "data", "bulwark.db.before-restore"), { readonly: true });
    expect(kept.query("SELECT email FROM users WHERE email = 'after-backup@example.com'").all()).toHaveLength(
      1,
    );
    kept.close();

    const again = await startServer(binary, folder, ADMIN);
    try {
      expect(await userEmails(again.url)).toEqual(["before-backup@example.com", ADMIN.BULWARK_ADMIN_EMAIL]);
    } finally {
      await again.stop();
    }
    // Run as root over a database that belongs to the service's user, the restored file is that user's.
    const data = join(folder, "data");
    for (const name of readdirSync(data)) chownSync(join(data, name), 65534, 65534);
    chownSync(data, 65534, 65534);
    rmSync(join(data, "bulwark.db.before-restore"));
    expect(process.getuid?.(), "this check runs as root (as npm test does, to install its tools)").toBe(0);
    expect(run(["restore", backupFile], folder).code).toBe(0);
    expect(statSync(join(data, "bulwark.db")).uid).toBe(65534);
    // A second restore would overwrite the kept copy: it is refused until that copy is moved away.
    const second = run(["restore", backupFile], folder);
    expect(second.code).toBe(1);
    expectOneLine(second.stderr, "bulwark.db.before-restore is there from an earlier restore");
  }, 90_000);

  test("refuses what is not a Bulwark database this version can run, and leaves the database alone", async () => {
    const folder = emptyFolder();
    expect(run(["migrate"], folder).code).toBe(0);
    const database = join(folder, "data", "bulwark.db");
    const original = readFileSync(database);

    const text = join(folder, "notes.txt");
    writeFileSync(text, "these are not the tables you are looking for\n".repeat(100));
    const notDatabase = run(["restore", text], folder);
    expect(notDatabase.code).toBe(1);
    expectOneLine(notDatabase.stderr, `${text} is not a SQLite database`);

    const foreign = join(folder, "other.db");
    const other = new Database(foreign, { create: true });
    other.exec("CREATE TABLE t (x)");
    other.close();
    const notOurs = run(["restore", foreign], folder);
    expect(notOurs.code).toBe(1);
    expectOneLine(notOurs.stderr, `${foreign} holds tables that are not Bulwark's (t)`);

    const newer = join(folder, "from-the-future.db");
    expect(run(["backup", newer], folder).code).toBe(0);
    const future = new Database(newer);
    future
      .query(
        "INSERT INTO bulwark_migrations (tag, applied_at, bulwark_version) VALUES ('9999_later', '2030-01-01', '9.9.9')",
      )
      .run();
    future.close();
    const tooNew = run(["restore", newer], folder);
    expect(tooNew.code).toBe(1);
    expectOneLine(
      tooNew.stderr,
      `${newer} was migrated by a newer Bulwark: it has schema version 9999 (migration 9999_later, by Bulwark 9.9.9)`,
    );
    expect(tooNew.stderr).toContain("run Bulwark 9.9.9 or later");

    const damaged = join(folder, "damaged.db");
    expect(run(["backup", damaged], folder).code).toBe(0);
    const reader = new Database(damaged, { readonly: true });
    const { rootpage, size } = reader
      .query<{ rootpage: number; size: number }, []>(
        "SELECT rootpage, (SELECT page_size FROM pragma_page_size()) AS size FROM sqlite_master WHERE name = 'users'",
      )
      .get() as { rootpage: number; size: number };
    reader.close();
    const bytes = readFileSync(damaged);
    // Noise over the users table's page (not the schema): the file opens, its data does not hold.
    const start = (rootpage - 1) * size;
    for (let offset = start; offset < start + size; offset += 7) bytes[offset] = (bytes[offset] ?? 0) ^ 0xa5;
    writeFileSync(damaged, bytes);
    const corrupt = run(["restore", damaged], folder);
    expect(corrupt.code).toBe(1);
    expectOneLine(corrupt.stderr, `${damaged} is damaged: PRAGMA integrity_check`);

    expect(run(["restore", join(folder, "missing.db")], folder).code).toBe(1);
    expect(readFileSync(database).equals(original)).toBe(true);
    expect(existsSync(`${database}.before-restore`)).toBe(false);
  }, 60_000);

  test("serve refuses a database newer than the executable, naming both versions", () => {
    const folder = emptyFolder();
    expect(run(["migrate"], folder).code).toBe(0);
    const database = new Database(join(folder, "data", "bulwark.db"));
    database
      .query(
        "INSERT INTO bulwark_migrations (tag, applied_at, bulwark_version) VALUES ('9999_later', '2030-01-01', '9.9.9')",
      )
      .run();
    database.close();
    const version = run(["version"], folder).stdout.trim().replace("bulwark ", "");
    const refused = run(["serve"], folder, { BULWARK_SERVER_PORT: "0" });
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr, "schema version 9999 (migration 9999_later, by Bulwark 9.9.9)");
    expect(refused.stderr).toMatch(
      new RegExp(`this is Bulwark ${version.replaceAll(".", "\\.")} with schema version \\d+`),
    );
  });
});

describe("the log of serve", () => {
  test("log.level=warn drops request lines but keeps where it listens, the first-run password and the stop", async () => {
    const folder = emptyFolder();
    const server = await startServer(binary, folder, { BULWARK_LOG_LEVEL: "warn" });
    expect((await fetch(`${server.url}/api/v1/health`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const lines = server
      .output()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string });
    expect(lines.map((line) => line.msg)).toEqual([
      expect.stringContaining("listening on http://127.0.0.1:"),
      // The public address (base_url): localhost, where passkeys and SSO callbacks work, not 127.0.0.1.
      expect.stringMatching(/^Console: http:\/\/localhost:\d+\/console\/$/),
      expect.stringMatching(/^First run: created the admin admin@bulwark\.local with the password \S+$/),
      "This password is shown only once. Change it in the console (your account page) or with PUT /api/v1/users/me/password.",
      expect.stringContaining("Sign in: curl"),
      // A warning is kept at warn: the example VPN endpoint (configWarnings).
      expect.stringContaining("vpn.endpoint is still the example"),
      "SIGTERM received: stopping",
      "stopped",
    ]);
  }, 30_000);
});

describe("bulwark config", () => {
  test("check prints every effective value with its source, secrets masked", () => {
    const folder = emptyFolder();
    const file = join(folder, "bulwark.toml");
    writeFileSync(file, '[server]\nport = 9100\n[log]\nformat = "json"\n');
    const secretPassword = "a-very-secret-admin-password";
    const secretToken = "metrics-token-0123456789abcdef";
    const checked = run(["config", "check"], folder, {
      BULWARK_SERVER_HOST: "0.0.0.0",
      BULWARK_ADMIN_PASSWORD: secretPassword,
      BULWARK_METRICS_TOKEN: secretToken,
    });
    expect(checked.code, checked.stderr).toBe(0);
    const lines = checked.stdout.split("\n");
    expect(lines).toContain("port = 9100  # file ./bulwark.toml");
    expect(lines).toContain('host = "0.0.0.0"  # env BULWARK_SERVER_HOST');
    expect(lines).toContain('synchronous = "full"  # default');
    expect(lines).toContain('password = "********"  # env BULWARK_ADMIN_PASSWORD, masked');
    expect(lines).toContain('token = "********"  # env BULWARK_METRICS_TOKEN, masked');
    expect(checked.stdout).not.toContain(secretPassword);
    expect(checked.stdout).not.toContain(secretToken);
    // The output is TOML: it reads back as the effective configuration.
    const effective = parse(checked.stdout) as Record<string, Record<string, unknown>>;
    expect(effective.server?.port).toBe(9100);
    expect(effective.log).toEqual({ format: "json", level: "info" });
    expect(effective.webhooks?.retry_schedule_seconds).toEqual([
      10, 60, 300, 1800, 7200, 21600, 43200, 86400,
    ]);
  });

  test("check fails with one line naming the key, and exit code 1", () => {
    const folder = emptyFolder();
    const badLevel = run(["config", "check"], folder, { BULWARK_LOG_LEVEL: "loud" });
    expect(badLevel.code).toBe(1);
    expectOneLine(badLevel.stderr, "log.level (BULWARK_LOG_LEVEL): must be one of debug, info, warn, error");
    expect(badLevel.stdout).toBe("");
    const shortToken = run(["config", "check"], folder, { BULWARK_METRICS_TOKEN: "short" });
    expect(shortToken.code).toBe(1);
    expectOneLine(shortToken.stderr, "invalid config metrics.token: use at least 16 characters");
    const missingCertificate = run(["config", "check"], folder, {
      BULWARK_SERVER_TLS_CERT: join(folder, "missing.pem"),
      BULWARK_SERVER_TLS_KEY: join(folder, "missing-key.pem"),
    });
    expect(missingCertificate.code).toBe(1);
    expectOneLine(missingCertificate.stderr, "missing.pem");
    const badOrigin = run(["config", "check"], folder, {
      BULWARK_SERVER_CORS_ORIGINS: "https://a.example/path",
    });
    expect(badOrigin.code).toBe(1);
    expectOneLine(badOrigin.stderr, "server.cors_origins");
  });

  test("example prints the annotated example configuration, also from a copied executable", () => {
    const folder = emptyFolder();
    const example = run(["config", "example"], folder);
    expect(example.code).toBe(0);
    expect(example.stdout).toBe(readFileSync(join(import.meta.dir, "../../config.example.toml"), "utf8"));
    expect(run(["help"], folder).stdout).toContain("bulwark config example");
  });
});

describe("bulwark org sso-domain", () => {
  test("the operator confirms, lists and takes away an email domain's organization; conflicts and bad input are one line", () => {
    const folder = emptyFolder();
    expect(run(["migrate"], folder).code).toBe(0);
    for (const org of ["Acme", "Globex"])
      expect(
        run(
          [
            "admin",
            "create",
            "--email",
            `ops@${org.toLowerCase()}.test`,
            "--password",
            "correct-horse-battery",
            "--org",
            org,
          ],
          folder,
        ).code,
      ).toBe(0);

    const added = run(["org", "sso-domain", "add", "--org", "Acme", "Acme.Test"], folder);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('acme.test: confirmed for "Acme"');
    const listed = run(["org", "sso-domain", "list"], folder);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^acme\.test\tAcme \([0-9a-f-]{36}\)\tconfirmed \(operator\)$/),
    ]);

    // Another organization cannot have it: the operator is told who has it and how to move it.
    const taken = run(["org", "sso-domain", "add", "--org", "Globex", "acme.test"], folder);
    expect(taken.code).toBe(1);
    expectOneLine(taken.stderr, 'acme.test is claimed by "Acme"');
    expect(taken.stderr).toContain("bulwark org sso-domain remove");

    expect(run(["org", "sso-domain", "remove", "--org", "Acme", "acme.test"], folder).code).toBe(0);
    expect(run(["org", "sso-domain", "add", "--org", "Globex", "acme.test"], folder).code).toBe(0);
    expect(run(["org", "sso-domain", "list", "--org", "Acme"], folder).stdout).toContain(
      "No email domain is claimed.",
    );

    expectOneLine(
      run(["org", "sso-domain", "remove", "--org", "Acme", "acme.test"], folder).stderr,
      "holds no claim on acme.test",
    );
    expectOneLine(
      run(["org", "sso-domain", "add", "--org", "Nobody", "x.test"], folder).stderr,
      'no organization has the id or name "Nobody"',
    );
    expectOneLine(
      run(["org", "sso-domain", "add", "--org", "Acme", "not a domain"], folder).stderr,
      "must be an email domain",
    );
    const usage = run(["org", "sso-domain", "grant", "--org", "Acme", "x.test"], folder);
    expect(usage.code).toBe(2);
    expectOneLine(usage.stderr, "org sso-domain add|remove --org ORG DOMAIN");
    expect(run(["org", "sso-domain", "add", "x.test"], folder).code).toBe(2);
  }, 30_000);
});
