/**
 * `restore` (and `serve`, for a file put in place by hand) accepts only a database whose tables, indexes,
 * views and triggers are exactly those its recorded migrations define, on the built executable: a backup
 * made by `bulwark backup` and then changed with bun:sqlite is refused naming each change, and leaves the
 * live database as it was; clean backups, also from an older migration level, restore and serve.
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrateDatabase } from "../../src/db/migrate";
import { embeddedMigrations } from "../../src/db/migrations.generated";
import { buildBinary, callServer, runCommand, startServer } from "../helpers/binary";

const ADMIN = { BULWARK_ADMIN_EMAIL: "ops@example.com", BULWARK_ADMIN_PASSWORD: "correct-horse-battery" };
const OPERATOR = { email: "operator@example.com", password: "operator-long-password" };

let binary: string;
/** A folder whose server ran (the admin and an operator exist) and stopped, and a backup of it made while serving. */
let folder: string;
let backup: string;

beforeAll(async () => {
  binary = await buildBinary();
  folder = mkdtempSync(join(tmpdir(), "bulwark-restore-schema-"));
  const server = await startServer(binary, folder, ADMIN);
  try {
    const login = await callServer(server, "POST", "/api/v1/auth/login", undefined, {
      email: ADMIN.BULWARK_ADMIN_EMAIL,
      password: ADMIN.BULWARK_ADMIN_PASSWORD,
    });
    await callServer(server, "POST", "/api/v1/users", login.token, {
      ...OPERATOR,
      name: "Op",
      role: "operator",
    });
    backup = join(folder, "nightly.db");
    expect(runCommand(binary, ["backup", backup], folder).code).toBe(0);
  } finally {
    await server.stop();
  }
}, 120_000);

function run(args: string[], cwd = folder) {
  return runCommand(binary, args, cwd, ADMIN);
}

/** A copy of the backup changed by `sql`, as someone with the file and bun:sqlite could change it. */
function tamperedBackup(name: string, sql: string): string {
  const file = join(folder, `${name}.db`);
  copyFileSync(backup, file);
  const database = new Database(file);
  database.exec(sql);
  database.close();
  return file;
}

/**
 * Runs `restore file`, expecting it refused with a line `bulwark: restore refused: <problem>` for each of
 * `problems` (texts or matchers), and the live database left as it was.
 */
function expectRefused(file: string, problems: unknown[]) {
  const live = join(folder, "data", "bulwark.db");
  const before = readFileSync(live);
  const refused = run(["restore", file]);
  expect(refused.code, refused.stdout).toBe(1);
  const lines = refused.stderr.trim().split("\n");
  for (const line of lines) expect(line).toStartWith("bulwark: restore refused: ");
  const refusals: unknown[] = lines.map((line) => line.slice("bulwark: restore refused: ".length));
  expect(refusals).toEqual(problems);
  expect(refused.stdout).toBe("");
  expect(readFileSync(live).equals(before)).toBe(true);
  expect(existsSync(`${live}.before-restore`)).toBe(false);
}

/** The operator signs in and reads their own account; their role is what the server answers. */
async function operatorRole(url: string): Promise<string> {
  const server = { url } as Parameters<typeof callServer>[0];
  const login = await callServer(server, "POST", "/api/v1/auth/login", undefined, OPERATOR);
  return (await callServer(server, "GET", "/api/v1/users/me", login.token)).role;
}

describe("restore checks the backup's schema", () => {
  test("a trigger added to a backup, that would make the operator an admin at their next sign-in, is refused by name", () => {
    const file = tamperedBackup(
      "with-trigger",
      `CREATE TRIGGER make_admin AFTER INSERT ON sessions
       WHEN (SELECT email FROM users WHERE id = new.user_id) = '${OPERATOR.email}'
       BEGIN UPDATE users SET role = 'admin' WHERE id = new.user_id; END`,
    );
    expectRefused(file, [`trigger "make_admin" is not part of Bulwark's schema`]);
  });

  test("an added view, an added index, a changed index, an extra table, a changed table and a dropped trigger are each refused by name", () => {
    expectRefused(
      tamperedBackup("with-view", "CREATE VIEW admins AS SELECT email FROM users WHERE role = 'admin'"),
      [`view "admins" is not part of Bulwark's schema`],
    );
    expectRefused(tamperedBackup("with-index", "CREATE INDEX users_role_idx ON users (role)"), [
      `index "users_role_idx" is not part of Bulwark's schema`,
    ]);
    expectRefused(
      tamperedBackup(
        "with-changed-index",
        "DROP INDEX `sessions_user_idx`; CREATE INDEX `sessions_user_idx` ON `sessions` (`ip`)",
      ),
      [
        expect.stringMatching(
          /^index "sessions_user_idx" differs from Bulwark's schema: ".*\( "ip" \)" where Bulwark's has ".*\( "user_id" \)"$/,
        ),
      ],
    );
    expectRefused(tamperedBackup("with-table", "CREATE TABLE notes (body TEXT)"), [
      `table "notes" is not part of Bulwark's schema`,
    ]);
    // All at once, and a column and a missing trigger: one line for each.
    expectRefused(
      tamperedBackup(
        "with-several",
        `CREATE TABLE notes (body TEXT); CREATE VIEW admins AS SELECT email FROM users;
         ALTER TABLE users ADD COLUMN note TEXT; DROP TRIGGER devices_count_insert;`,
      ),
      [
        `table "notes" is not part of Bulwark's schema`,
        expect.stringMatching(
          /^table "users" differs from Bulwark's schema: ".*, note TEXT , .*" where Bulwark's has ".*"$/,
        ),
        `view "admins" is not part of Bulwark's schema`,
        `trigger "devices_count_insert" of Bulwark's schema is missing`,
      ],
    );
  });

  test("a clean backup restores, and the server it starts signs the operator in as an operator", async () => {
    const restored = run(["restore", backup]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toBe("");
    const server = await startServer(binary, folder, ADMIN);
    try {
      expect(await operatorRole(server.url)).toBe("operator");
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("serve refuses a database with a trigger put in by hand, naming it", () => {
    const own = mkdtempSync(join(tmpdir(), "bulwark-restore-schema-"));
    mkdirSync(join(own, "data"));
    copyFileSync(
      tamperedBackup("by-hand", "CREATE TRIGGER make_admin AFTER INSERT ON sessions BEGIN SELECT 1; END"),
      join(own, "data", "bulwark.db"),
    );
    // With a time limit: a server that accepted the database would listen until stopped.
    const refused = Bun.spawnSync([binary, "serve"], {
      cwd: own,
      env: { PATH: process.env.PATH ?? "", HOME: own, BULWARK_SERVER_PORT: "0", ...ADMIN },
      timeout: 20_000,
    });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.toString().trim()).toBe(
      `bulwark: database ./data/bulwark.db refused: trigger "make_admin" is not part of Bulwark's schema`,
    );
    const migrate = runCommand(binary, ["migrate"], own);
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain(`refused: trigger "make_admin" is not part of Bulwark's schema`);
  }, 30_000);
});

describe("restore accepts backups of older migration levels", () => {
  /** A database as an older Bulwark left it: migrated up to before the last migration that alters a table. */
  function olderDatabase(file: string): string[] {
    const level = embeddedMigrations.findLastIndex((migration) => /ALTER TABLE/.test(migration.sql));
    const migrations = embeddedMigrations.slice(0, level);
    const database = new Database(file, { create: true });
    migrateDatabase(database, { migrations, version: "0.0.1" });
    database.close();
    return migrations.map((migration) => migration.tag);
  }

  test("restored, migrated forward by serve, backed up and restored again, it serves", async () => {
    const own = mkdtempSync(join(tmpdir(), "bulwark-restore-older-"));
    const older = join(own, "older.db");
    const tags = olderDatabase(older);
    const restored = run(["restore", older], own);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(
      `The next start of serve applies ${embeddedMigrations.length - tags.length} migration(s)`,
    );

    const server = await startServer(binary, own, ADMIN);
    const migrated = join(own, "migrated.db");
    try {
      expect(server.output()).toContain(`Applied ${embeddedMigrations.length - tags.length} migration(s)`);
      expect(runCommand(binary, ["backup", migrated], own).code).toBe(0);
    } finally {
      await server.stop();
    }
    const again = run(["restore", migrated], own);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe("");
    const restarted = await startServer(binary, own, ADMIN);
    try {
      const login = await callServer(restarted, "POST", "/api/v1/auth/login", undefined, {
        email: ADMIN.BULWARK_ADMIN_EMAIL,
        password: ADMIN.BULWARK_ADMIN_PASSWORD,
      });
      expect((await callServer(restarted, "GET", "/api/v1/users/me", login.token)).role).toBe("admin");
    } finally {
      await restarted.stop();
    }
  }, 90_000);

  test("one from before Bulwark recorded its version in bulwark_migrations restores and serves", async () => {
    const own = mkdtempSync(join(tmpdir(), "bulwark-restore-older-"));
    const older = join(own, "unversioned.db");
    olderDatabase(older);
    const database = new Database(older);
    database.exec("ALTER TABLE bulwark_migrations DROP COLUMN bulwark_version");
    database.close();
    const restored = run(["restore", older], own);
    expect(restored.code, restored.stderr).toBe(0);
    const server = await startServer(binary, own, ADMIN);
    await server.stop();
  }, 60_000);
});
