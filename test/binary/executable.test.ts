import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, expectOneLine, type RunningServer, runCommand, startServer } from "../helpers/binary";

let binary: string;
beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

function emptyFolder(): string {
  return mkdtempSync(join(tmpdir(), "bulwark-run-"));
}

function run(args: string[], cwd: string, env: Record<string, string> = {}) {
  return runCommand(binary, args, cwd, env);
}

async function post(server: RunningServer, path: string, body: unknown, token?: string) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe("the built executable, from an empty folder", () => {
  let server: RunningServer;
  let folder: string;

  beforeAll(async () => {
    folder = emptyFolder();
    server = await startServer(binary, folder);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  test("prints where it listens and how to sign in, with a first-run password", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output()).toContain("admin@bulwark.local");
    expect(server.output()).toContain("/api/v1/auth/login");
    expect(existsSync(join(folder, "data", "bulwark.db"))).toBe(true);
  }, 60_000);

  test("sign in, refresh, a replayed refresh token revokes the session, logout ends the access token", async () => {
    const password = /with the password ([^\s"]+)/.exec(server.output())?.[1];
    expect(password).toBeDefined();
    const login = await post(server, "/api/v1/auth/login", { email: "admin@bulwark.local", password });
    expect(login.status).toBe(200);
    expect(login.body.expires_in).toBe(86400);

    const refreshed = await post(server, "/api/v1/auth/refresh", { refresh_token: login.body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(login.body.refresh_token);

    const replay = await post(server, "/api/v1/auth/refresh", { refresh_token: login.body.refresh_token });
    expect(replay.status).toBe(401);
    const newOneAfterReplay = await post(server, "/api/v1/auth/refresh", {
      refresh_token: refreshed.body.refresh_token,
    });
    expect(newOneAfterReplay.status).toBe(401);

    const second = await post(server, "/api/v1/auth/login", { email: "admin@bulwark.local", password });
    const me = await fetch(`${server.url}/api/v1/users/me`, {
      headers: { authorization: `Bearer ${second.body.token}` },
    });
    expect(me.status).toBe(200);
    const logout = await post(
      server,
      "/api/v1/auth/logout",
      { refresh_token: second.body.refresh_token },
      second.body.token,
    );
    expect(logout.status).toBe(200);
    const afterLogout = await fetch(`${server.url}/api/v1/users/me`, {
      headers: { authorization: `Bearer ${second.body.token}` },
    });
    expect(afterLogout.status).toBe(401);
    expect(
      (await post(server, "/api/v1/auth/refresh", { refresh_token: second.body.refresh_token })).status,
    ).toBe(401);
  }, 60_000);

  test("keeps the database (signing key, webhook secrets) readable by its owner only", () => {
    expect(statSync(join(folder, "data")).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, "data", "bulwark.db")).mode & 0o777).toBe(0o600);
  });

  test("a second server on the same port fails with one line naming the address", () => {
    const port = new URL(server.url).port;
    const second = run(["serve"], emptyFolder(), { BULWARK_SERVER_PORT: port });
    expect(second.code).toBe(1);
    expectOneLine(second.stderr, `cannot listen on 127.0.0.1:${port}: the port is in use`);
  }, 60_000);

  test("what a failed start logged comes before its error when both streams go to one place", () => {
    // As under systemd or `2>&1`: the migrations applied to a new database, then why it stopped.
    const newFolder = emptyFolder();
    const merged = Bun.spawnSync(["sh", "-c", 'exec "$0" serve 2>&1', binary], {
      cwd: newFolder,
      env: { PATH: process.env.PATH ?? "", HOME: newFolder, BULWARK_SERVER_PORT: new URL(server.url).port },
      stdout: "pipe",
    });
    const lines = merged.stdout.toString().trim().split("\n");
    const applied = lines.findIndex((line) => line.includes("Applied"));
    const failure = lines.findIndex((line) => line.startsWith("bulwark: cannot listen"));
    expect([merged.exitCode, applied >= 0, failure > applied]).toEqual([1, true, true]);
  }, 60_000);

  test("a second server on the same database exits at once, naming the file and the running process", () => {
    const second = run(["serve"], folder, { BULWARK_SERVER_PORT: "0" });
    expect(second.code).toBe(1);
    expectOneLine(second.stderr, "database ./data/bulwark.db is already served by process ");
    expect(second.stderr).toContain(`process ${server.process.pid}`);
    expect(second.stdout).not.toContain("listening");
  }, 60_000);

  test("a symbolic link to the served database meets the same lock", () => {
    const link = join(emptyFolder(), "link.db");
    symlinkSync(join(folder, "data", "bulwark.db"), link);
    const second = run(["serve"], folder, { BULWARK_SERVER_PORT: "0", BULWARK_DATABASE_PATH: link });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`is already served by process ${server.process.pid}`);
  }, 60_000);

  test("the JWT issuer follows the port really listened on when base_url is not set", async () => {
    const password = /with the password ([^\s"]+)/.exec(server.output())?.[1];
    const login = await post(server, "/api/v1/auth/login", { email: "admin@bulwark.local", password });
    const payload = JSON.parse(Buffer.from(login.body.token.split(".")[1], "base64url").toString());
    // Loopback is named localhost (passkeys refuse an IP address as the relying party).
    expect(payload.iss).toBe(`http://localhost:${new URL(server.url).port}`);
    expect(server.url).not.toEndWith(":8080");
  }, 60_000);

  test("serves the OpenAPI document and the offline docs page", async () => {
    const document = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as { openapi: string };
    expect(document.openapi).toStartWith("3.1");
    const page = await fetch(`${server.url}/api/v1/docs`);
    expect(page.status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/docs/assets/scalar.js`)).status).toBe(200);
  }, 60_000);
});

describe("the command line", () => {
  test("two migrate processes racing on a new database both succeed, applying each migration once", async () => {
    for (let round = 0; round < 3; round++) {
      const folder = emptyFolder();
      const spawn = () =>
        Bun.spawn([binary, "migrate"], {
          cwd: folder,
          env: { PATH: process.env.PATH ?? "", HOME: folder },
          stderr: "pipe",
        });
      const racers = [spawn(), spawn()];
      const codes = await Promise.all(racers.map((racer) => racer.exited));
      expect(codes).toEqual([0, 0]);
      const database = new Database(join(folder, "data", "bulwark.db"), { readonly: true });
      const tags = database.query<{ tag: string }, []>("SELECT tag FROM bulwark_migrations").all();
      expect(new Set(tags.map((row) => row.tag)).size).toBe(tags.length);
      database.close();
    }
  }, 60_000);

  test("version and help", () => {
    const folder = emptyFolder();
    expect(run(["version"], folder).stdout).toMatch(/^bulwark \d+\.\d+\.\d+/);
    const help = run(["help"], folder);
    expect(help.code).toBe(0);
    for (const command of ["serve", "migrate", "admin create", "org set-plan", "backup", "version"])
      expect(help.stdout).toContain(command);
  }, 60_000);

  test("unknown commands and flags: one line on stderr and exit code 2", () => {
    const folder = emptyFolder();
    for (const args of [
      ["frobnicate"],
      ["serve", "--prot", "1"],
      ["admin", "remove"],
      ["migrate", "extra"],
    ]) {
      const result = run(args, folder);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
  }, 60_000);

  test("invalid configuration: one line naming the key and, for an enum, the allowed values", () => {
    const result = run(["migrate"], emptyFolder(), { BULWARK_DATABASE_SYNCHRONOUS: "off" });
    expect(result.code).toBe(1);
    expectOneLine(result.stderr, "database.synchronous");
    expect(result.stderr).toContain("must be one of full, normal");
    const proxy = run(["serve"], emptyFolder(), { BULWARK_SERVER_TRUST_PROXY: "yes" });
    expect(proxy.code).toBe(1);
    expectOneLine(proxy.stderr, "server.trust_proxy");
  }, 60_000);

  test("a database of another program, or of a newer Bulwark, is refused before anything is written", () => {
    const folder = emptyFolder();
    const foreign = join(folder, "other.db");
    const other = new Database(foreign, { create: true });
    other.exec("CREATE TABLE t (x)");
    other.close();
    const refusedForeign = run(["serve"], folder, {
      BULWARK_SERVER_PORT: "0",
      BULWARK_DATABASE_PATH: foreign,
    });
    expect(refusedForeign.code).toBe(1);
    expectOneLine(refusedForeign.stderr, `database ${foreign} holds tables that are not Bulwark's (t)`);
    const untouched = new Database(foreign, { readonly: true });
    expect(untouched.query("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: "t" },
    ]);
    untouched.close();

    expect(run(["migrate"], folder).code).toBe(0);
    const database = new Database(join(folder, "data", "bulwark.db"));
    database
      .query("INSERT INTO bulwark_migrations (tag, applied_at) VALUES ('9999_from_the_future', '2027-01-01')")
      .run();
    database.close();
    const refusedNewer = run(["serve"], folder, { BULWARK_SERVER_PORT: "0" });
    expect(refusedNewer.code).toBe(1);
    expectOneLine(
      refusedNewer.stderr,
      "was migrated by a newer Bulwark: it has schema version 9999 (migration 9999_from_the_future, by a newer Bulwark), this is Bulwark ",
    );
    expect(refusedNewer.stderr).toMatch(
      /this is Bulwark \d+\.\d+\.\d+ with schema version [1-9]\d*; run that newer version/,
    );
  }, 60_000);

  test("a first run whose port is taken creates no admin, so the next start still prints the password", async () => {
    const folder = emptyFolder();
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("busy") });
    try {
      const failed = run(["serve"], folder, { BULWARK_SERVER_PORT: String(blocker.port) });
      expect(failed.code).toBe(1);
      expect(failed.stdout).not.toContain("First run");
    } finally {
      blocker.stop(true);
    }
    const started = await startServer(binary, folder);
    try {
      // Said around the line that it listens, which is all startServer waits for: a moment more here.
      for (let waited = 0; waited < 5000 && !started.output().includes("First run"); waited += 50)
        await Bun.sleep(50);
      expect(started.output()).toContain(
        "First run: created the admin admin@bulwark.local with the password",
      );
    } finally {
      await started.stop();
    }
  }, 60_000);

  test("a BULWARK_ variable that names no key is refused, with the key it probably meant", () => {
    const result = run(["serve"], emptyFolder(), { BULWARK_SERVER_PROT: "19005" });
    expect(result.code).toBe(1);
    expectOneLine(result.stderr, "unknown environment variable BULWARK_SERVER_PROT");
    expect(result.stderr).toContain("did you mean BULWARK_SERVER_PORT?");
    // BULWARK_ADMIN_* seed the first admin and are left alone.
    expect(run(["migrate"], emptyFolder(), { BULWARK_ADMIN_TEAM: "x" }).code).toBe(0);
  }, 60_000);

  test("startup failures are one line naming the file or address and the cause, never a stack", () => {
    const folder = emptyFolder();
    const notADatabase = join(folder, "notes.db");
    writeFileSync(notADatabase, "these are not the pages of a SQLite database".repeat(100));
    const cases: [Record<string, string>, string][] = [
      [{ BULWARK_SERVER_HOST: "999.1.1.1" }, 'invalid config server.host: "999.1.1.1" is not an IP address'],
      [
        { BULWARK_SERVER_HOST: "no-such-host.invalid" },
        "cannot listen on no-such-host.invalid: the host name does not resolve",
      ],
      [{ BULWARK_ADMIN_EMAIL: "bad" }, "admin.email (BULWARK_ADMIN_EMAIL): must be an email address"],
      [
        { BULWARK_ADMIN_PASSWORD: "short" },
        "admin.password (BULWARK_ADMIN_PASSWORD): must be at least 12 characters",
      ],
      [{ BULWARK_SERVER_HOST: "10.255.255.254" }, "cannot listen on 10.255.255.254:"],
      [{ BULWARK_DATABASE_PATH: "/proc/no-such/bulwark.db" }, "/proc/no-such/bulwark.db"],
      [
        { BULWARK_DATABASE_PATH: notADatabase },
        `cannot open database ${notADatabase}: the file is not a SQLite database`,
      ],
    ];
    for (const [env, expected] of cases) {
      const result = run(["serve"], folder, { BULWARK_SERVER_PORT: "0", ...env });
      expect({ env, code: result.code }).toEqual({ env, code: 1 });
      expectOneLine(result.stderr, expected);
    }
  }, 60_000);

  test("migrate, admin create, then sign in with that admin; backup copies the live database", async () => {
    const folder = emptyFolder();
    const migrate = run(["migrate"], folder);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toContain("Applied");
    expect(run(["migrate"], folder).stdout).toContain("up to date");

    const created = run(
      ["admin", "create", "--email", "Ops@Example.com", "--password", "a-long-password-1", "--org", "Acme"],
      folder,
    );
    expect(created.code).toBe(0);
    expect(
      run(["admin", "create", "--email", "ops@example.com", "--password", "a-long-password-1"], folder).code,
    ).toBe(1);
    expect(run(["admin", "create", "--email", "x@example.com", "--password", "short"], folder).code).toBe(1);

    const server = await startServer(binary, folder);
    try {
      expect(server.output()).not.toContain("First run");
      const login = await post(server, "/api/v1/auth/login", {
        email: "ops@example.com",
        password: "a-long-password-1",
      });
      expect(login.status).toBe(200);
      const organization = await fetch(`${server.url}/api/v1/organizations/current`, {
        headers: { authorization: `Bearer ${login.body.token}` },
      });
      expect(((await organization.json()) as { name: string }).name).toBe("Acme");

      const backup = run(["backup", "copy.db"], folder);
      expect(backup.code).toBe(0);
      expect(statSync(join(folder, "copy.db")).mode & 0o777).toBe(0o600);
      const copy = new Database(join(folder, "copy.db"), { readonly: true });
      expect(
        copy
          .query<{ email: string }, []>("SELECT email FROM users")
          .all()
          .map((row) => row.email),
      ).toContain("ops@example.com");
      copy.close();
      expect(run(["backup", "copy.db"], folder).code).toBe(2);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("webhook secrets are sealed with a key beside the database: a backup alone does not reveal them", async () => {
    const folder = emptyFolder();
    const server = await startServer(binary, folder, {
      BULWARK_ADMIN_EMAIL: "keys@example.com",
      BULWARK_ADMIN_PASSWORD: "keys-password-1234",
      BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    });
    try {
      const login = await post(server, "/api/v1/auth/login", {
        email: "keys@example.com",
        password: "keys-password-1234",
      });
      const secret = "plain-text-signing-secret-4711";
      const created = await post(
        server,
        "/api/v1/webhooks",
        { url: "http://127.0.0.1:9/hook", events: ["*"], secret },
        login.body.token,
      );
      expect(created.status).toBe(201);
      expect(run(["backup", "copy.db"], folder).code).toBe(0);
      const copy = new Database(join(folder, "copy.db"), { readonly: true });
      const stored = copy.query<{ secret: string }, []>("SELECT secret FROM webhooks").get()?.secret ?? "";
      copy.close();
      expect(stored).toStartWith("sealed:v1:");
      expect(readFileSync(join(folder, "copy.db")).includes(Buffer.from(secret))).toBe(false);
      expect(statSync(join(folder, "data", "bulwark.db.key")).mode & 0o777).toBe(0o600);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("database.key_file puts the key elsewhere: secrets open with it, and a start without it says they do not", async () => {
    const folder = emptyFolder();
    const keyFile = join(folder, "secrets", "bulwark.key");
    mkdirSync(join(folder, "secrets"), { mode: 0o700 });
    const account = {
      BULWARK_ADMIN_EMAIL: "keyfile@example.com",
      BULWARK_ADMIN_PASSWORD: "keyfile-password-1234",
    };
    const withKey = {
      ...account,
      BULWARK_DATABASE_KEY_FILE: keyFile,
      BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    };
    const server = await startServer(binary, folder, withKey);
    try {
      const login = await post(server, "/api/v1/auth/login", {
        email: account.BULWARK_ADMIN_EMAIL,
        password: account.BULWARK_ADMIN_PASSWORD,
      });
      const created = await post(
        server,
        "/api/v1/webhooks",
        { url: "http://127.0.0.1:9/hook", events: ["*"], secret: "signing-secret-kept-elsewhere" },
        login.body.token,
      );
      expect(created.status).toBe(201);
    } finally {
      await server.stop();
    }
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(existsSync(join(folder, "data", "bulwark.db.key"))).toBe(false);
    const unreadable = /does not open the secrets sealed in this database/;

    const again = await startServer(binary, folder, withKey);
    await again.stop();
    expect(again.output()).not.toMatch(unreadable);

    // Without the setting, the default key beside the database is created, and it opens nothing.
    const withoutKey = await startServer(binary, folder, account);
    await withoutKey.stop();
    expect(withoutKey.output()).toMatch(new RegExp(`bulwark\\.db\\.key ${unreadable.source}`));
  }, 60_000);

  test("admin create reads the password from a file or standard input, and checks the email like POST /users", () => {
    const folder = emptyFolder();
    writeFileSync(join(folder, "pw"), "from-a-file-password\n");
    const fromFile = run(["admin", "create", "--email", "File@Example.com", "--password-file", "pw"], folder);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain("Created admin file@example.com");
    expect(fromFile.stderr).toBe("");

    const fromStdin = Bun.spawnSync(
      [binary, "admin", "create", "--email", "stdin@example.com", "--org", "Piped"],
      {
        cwd: folder,
        env: { PATH: process.env.PATH ?? "", HOME: folder },
        stdin: new TextEncoder().encode("from-standard-input\n"),
      },
    );
    expect(fromStdin.exitCode).toBe(0);
    expect(fromStdin.stdout.toString()).toContain('in organization "Piped"');

    const badEmail = run(["admin", "create", "--email", "not an email", "--password-file", "pw"], folder);
    expect(badEmail.code).toBe(1);
    expectOneLine(badEmail.stderr, "email: must be an email address");
    const inline = run(
      ["admin", "create", "--email", "inline@example.com", "--password", "inline-password-123"],
      folder,
    );
    expect(inline.code).toBe(0);
    expect(inline.stderr).toContain("shell history");
    const both = run(
      ["admin", "create", "--email", "x@example.com", "--password", "p", "--password-file", "pw"],
      folder,
    );
    expect(both.code).toBe(2);
    // Well formed, but it cannot be carried out: exit code 1, not a usage error.
    const unreadable = run(
      ["admin", "create", "--email", "y@example.com", "--password-file", "missing"],
      folder,
    );
    expect(unreadable.code).toBe(1);
    expectOneLine(unreadable.stderr, "cannot read --password-file missing");
    const noFolder = run(["backup", "no-such-folder/copy.db"], folder);
    expect(noFolder.code).toBe(1);
    expectOneLine(noFolder.stderr, "cannot write the backup to no-such-folder/copy.db");
  }, 60_000);

  test("BULWARK_ADMIN_EMAIL and BULWARK_ADMIN_PASSWORD choose the first admin", async () => {
    const folder = emptyFolder();
    const server = await startServer(binary, folder, {
      BULWARK_ADMIN_EMAIL: "root@example.com",
      BULWARK_ADMIN_PASSWORD: "chosen-password-123",
    });
    try {
      expect(server.output()).not.toContain("chosen-password-123");
      expect(
        (
          await post(server, "/api/v1/auth/login", {
            email: "root@example.com",
            password: "chosen-password-123",
          })
        ).status,
      ).toBe(200);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe("a first start, watched from the moment it listens", () => {
  /** A port free now, for a server whose address the test must know before it says where it listens. */
  async function freePort(): Promise<number> {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const { port } = probe;
    probe.stop(true);
    return port;
  }

  test("health is 503 `starting` until the first admin exists, and no sign-in sent meanwhile is refused", async () => {
    const folder = emptyFolder();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = Bun.spawn([binary, "serve"], {
      cwd: folder,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: folder,
        BULWARK_SERVER_PORT: String(port),
        BULWARK_ADMIN_EMAIL: "first@example.com",
        BULWARK_ADMIN_PASSWORD: "first-admin-password",
      },
      stdout: "ignore",
      stderr: "ignore",
    });
    const health: { status: number; body: string }[] = [];
    const signIns: number[] = [];
    let sentSignIns = 0;
    try {
      // What a deployment script does: poll health, then sign in at once; and a client that does not
      // wait at all, signing in over and over from the first moment the port answers.
      const deadline = Date.now() + 20_000;
      let isHealthy = false;
      while (!isHealthy && Date.now() < deadline) {
        try {
          const answer = await fetch(`${base}/api/v1/health`);
          health.push({ status: answer.status, body: await answer.text() });
          isHealthy = answer.status === 200;
          // Paced, and the sign-ins few: the probes have a per-address budget of 100 a minute, and
          // more sign-ins of one pair at once than auth.login_max_failures are refused by design.
          if (sentSignIns < 3) {
            sentSignIns += 1;
            void fetch(`${base}/api/v1/auth/login`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ email: "first@example.com", password: "first-admin-password" }),
            }).then((signIn) => signIns.push(signIn.status));
          }
          await Bun.sleep(5);
        } catch {
          await Bun.sleep(2); // not listening yet
        }
      }
      expect(isHealthy).toBe(true);
      const afterHealthy = await fetch(`${base}/api/v1/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "first@example.com", password: "first-admin-password" }),
      });
      expect(afterHealthy.status, await afterHealthy.clone().text()).toBe(200);
      const beforeReady = health.slice(0, -1);
      for (const answer of beforeReady) {
        expect(answer.status).toBe(503);
        expect(JSON.parse(answer.body).status).toBe("starting");
      }
      // Every sign-in sent while it started waited for the start and succeeded.
      while (signIns.length < sentSignIns && Date.now() < deadline) await Bun.sleep(10);
      expect(signIns).toEqual(signIns.map(() => 200));
    } finally {
      child.kill();
      await child.exited;
    }
  }, 60_000);
});

describe("the example VPN endpoint", () => {
  test("serve and config check warn in one line naming vpn.endpoint while it is the example, and not once it is set", async () => {
    const folder = emptyFolder();
    const warning = /vpn\.endpoint is still the example vpn\.example\.com:51820/;
    const checked = run(["config", "check"], folder);
    expect(checked.code).toBe(0);
    const warnings = checked.stderr.trim().split("\n");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toStartWith("bulwark: warning: ");
    expect(warnings[0]).toMatch(warning);
    expect(checked.stdout).not.toMatch(warning);
    const set = run(["config", "check"], folder, { BULWARK_VPN_ENDPOINT: "vpn.bulwark-test.net:51820" });
    expect(set.code).toBe(0);
    expect(set.stderr).toBe("");
    // Any host reserved for examples, in any case, is no server either.
    for (const example of ["VPN.EXAMPLE.COM:51820", "wg.example.org:51821", "vpn.corp.example:51820"]) {
      const other = run(["config", "check"], folder, { BULWARK_VPN_ENDPOINT: example });
      expect(other.stderr).toContain(`vpn.endpoint is an example host, ${example}`);
    }

    // The warning and "listening on" may travel on different streams: the whole log is read once
    // the server has stopped.
    const server = await startServer(binary, folder, { BULWARK_LOG_FORMAT: "json" });
    await server.stop();
    const lines = server
      .output()
      .split("\n")
      .filter((line) => warning.test(line));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "{}").level).toBe("warn");
    const configured = await startServer(binary, folder, {
      BULWARK_VPN_ENDPOINT: "vpn.bulwark-test.net:51820",
    });
    await configured.stop();
    expect(configured.output()).toContain("listening on");
    expect(configured.output()).not.toMatch(warning);
  }, 60_000);
});
