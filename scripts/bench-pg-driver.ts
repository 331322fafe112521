/**
 * Which PostgreSQL driver the PostgreSQL store uses: each candidate through drizzle, on a throwaway cluster
 * (test/helpers/pg-cluster.ts: durability off, so a commit costs no disk flush), measured on a table of
 * 10,000 rows:
 *   - a prepared SELECT by primary key, one at a time and 16 in flight (pool of 10);
 *   - a check-in-shaped transaction (BEGIN, SELECT the row, UPDATE it, COMMIT), one at a time and 16 in flight;
 * and whether it works inside `bun build --compile` output (the build flags `npm run build` uses): a tiny
 * entry connects, runs a query and a transaction through drizzle and prints the result.
 * Candidates: Bun.sql (built into Bun, `drizzle-orm/bun-sql`) and, when the `postgres` package is
 * installed, postgres.js (`drizzle-orm/postgres-js`). Each figure is the median of the rounds, the drivers
 * alternating. Usage: `npm run bench:pg-driver [-- --rounds 3]`. Printed, never asserted.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { $, SQL } from "bun";
import { eq, sql } from "drizzle-orm";
import { drizzle as drizzleBunSql } from "drizzle-orm/bun-sql";
import { bigint, integer, type PgDatabase, type PgQueryResultHKT, pgTable, text } from "drizzle-orm/pg-core";
import { startPgCluster } from "../test/helpers/pg-cluster";
import { BUILD_FLAGS } from "./build-executable";

const ROOT = join(import.meta.dir, "..");
const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const rounds = argument("rounds", 3);
const ROWS = 10_000;
const POOL = 10;
const IN_FLIGHT = 16;

const devices = pgTable("bench_devices", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  status: text("status").notNull(),
  checkIns: integer("check_ins").notNull(),
  lastSeenAt: bigint("last_seen_at", { mode: "number" }).notNull(),
});

type Database = PgDatabase<PgQueryResultHKT>;

interface Driver {
  name: string;
  /** Names the compiled entry's files in test-results/bench-pg-driver/. */
  slug: string;
  /** drizzle's module for it, and the lines that connect `db` to `url` inside the compiled entry. */
  compiled: { imports: string; connect: string; close: string };
  open(url: string): Promise<{ db: Database; close(): Promise<void> }>;
}

const drivers: Driver[] = [
  {
    name: "Bun.sql (drizzle-orm/bun-sql)",
    slug: "bun-sql",
    compiled: {
      imports: 'import { SQL } from "bun";\nimport { drizzle } from "drizzle-orm/bun-sql";',
      connect: "const client = new SQL(url, { max: 2 });\nconst db = drizzle({ client });",
      close: "await client.close();",
    },
    async open(url) {
      const client = new SQL(url, { max: POOL });
      return { db: drizzleBunSql({ client }) as unknown as Database, close: () => client.close() };
    },
  },
];
const postgresJsInstalled = existsSync(join(ROOT, "node_modules", "postgres", "package.json"));
if (postgresJsInstalled)
  drivers.push({
    name: "postgres.js (drizzle-orm/postgres-js)",
    slug: "postgres-js",
    compiled: {
      imports: 'import postgres from "postgres";\nimport { drizzle } from "drizzle-orm/postgres-js";',
      connect: "const client = postgres(url, { max: 2 });\nconst db = drizzle({ client });",
      close: "await client.end();",
    },
    async open(url) {
      // Imported by name at run time: the package is optional, and absent from a clean install.
      const moduleName = "postgres";
      const postgres = (await import(moduleName)).default;
      const { drizzle } = await import("drizzle-orm/postgres-js");
      const client = postgres(url, { max: POOL });
      return { db: drizzle({ client }) as unknown as Database, close: () => client.end() };
    },
  });

/** Microseconds per operation of `count` calls of `operation`, `inFlight` at a time. */
async function measure(count: number, inFlight: number, operation: (i: number) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await operation(next++);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return ((performance.now() - started) * 1000) / count;
}

const randomId = () => 1 + Math.floor(Math.random() * ROWS);

const MEASURES = [
  { label: "prepared SELECT by primary key, sequential", count: 5_000, inFlight: 1, kind: "select" },
  {
    label: `prepared SELECT by primary key, ${IN_FLIGHT} in flight`,
    count: 5_000,
    inFlight: IN_FLIGHT,
    kind: "select",
  },
  { label: "check-in transaction, sequential", count: 2_000, inFlight: 1, kind: "transaction" },
  {
    label: `check-in transaction, ${IN_FLIGHT} in flight`,
    count: 2_000,
    inFlight: IN_FLIGHT,
    kind: "transaction",
  },
] as const;

async function runMeasures(db: Database): Promise<number[]> {
  const byId = db
    .select()
    .from(devices)
    .where(eq(devices.id, sql.placeholder("id")))
    .limit(1)
    .prepare("bench_device_by_id");
  const checkIn = (id: number) =>
    db.transaction(async (tx) => {
      const [device] = await tx.select().from(devices).where(eq(devices.id, id)).limit(1);
      if (!device) throw new Error(`no device ${id}`);
      await tx
        .update(devices)
        .set({ checkIns: device.checkIns + 1, lastSeenAt: Date.now() })
        .where(eq(devices.id, id));
    });
  // Warm-up: connections opened, statements prepared, code paths compiled.
  await measure(500, IN_FLIGHT, () => byId.execute({ id: randomId() }));
  await measure(200, IN_FLIGHT, () => checkIn(randomId()));
  const results: number[] = [];
  for (const { count, inFlight, kind } of MEASURES)
    results.push(
      await measure(count, inFlight, () =>
        kind === "select" ? byId.execute({ id: randomId() }) : checkIn(randomId()),
      ),
    );
  return results;
}

/** Builds a tiny entry with the driver into a standalone executable, runs it, and says what happened. */
async function compiledCheck(driver: Driver, url: string, folder: string): Promise<string> {
  const entry = join(folder, `${driver.slug}.ts`);
  const outfile = join(folder, driver.slug);
  writeFileSync(
    entry,
    `${driver.compiled.imports}
import { eq, sql } from "drizzle-orm";
import { integer, pgTable } from "drizzle-orm/pg-core";

const url = process.argv[2] ?? "";
${driver.compiled.connect}
const counters = pgTable("compiled_check", { id: integer("id").primaryKey(), hits: integer("hits").notNull() });
await db.execute(sql\`CREATE TABLE compiled_check (id integer PRIMARY KEY, hits integer NOT NULL)\`);
await db.insert(counters).values({ id: 1, hits: 0 });
const hits = await db.transaction(async (tx) => {
  const [row] = await tx.select().from(counters).where(eq(counters.id, 1));
  await tx.update(counters).set({ hits: (row?.hits ?? 0) + 1 }).where(eq(counters.id, 1));
  const [after] = await tx.select().from(counters).where(eq(counters.id, 1));
  return after?.hits;
});
const [server] = await db.execute(sql\`SELECT current_setting('server_version') AS version\`);
console.log(JSON.stringify({ hits, version: server?.version }));
${driver.compiled.close}
`,
  );
  const build = await $`bun build ${BUILD_FLAGS} ${entry} --outfile ${outfile}`.cwd(ROOT).nothrow().quiet();
  if (build.exitCode !== 0) return `build fails: ${build.stderr.toString().trim().split("\n")[0]}`;
  const run = await $`${outfile} ${url}`.nothrow().quiet();
  const output = `${run.stdout}${run.stderr}`.trim();
  try {
    const result = JSON.parse(output) as { hits?: number; version?: string };
    if (run.exitCode === 0 && result.hits === 1)
      return `works (transaction committed; server ${result.version})`;
  } catch {
    // not the line it prints on success: said below
  }
  return `fails (exit ${run.exitCode}): ${output.split("\n")[0]}`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const cluster = await startPgCluster();
try {
  const admin = new SQL(cluster.url, { max: 1 });
  const [{ server_version: serverVersion }] = await admin`SHOW server_version`;
  await admin.close();
  console.log(
    `PostgreSQL ${serverVersion} (fsync, synchronous_commit, full_page_writes off), Bun ${Bun.version}, ${rounds} rounds, pool ${POOL}`,
  );
  const urls = new Map<Driver, string>();
  for (const driver of drivers) {
    const url = await cluster.createDatabase();
    urls.set(driver, url);
    const seed = new SQL(url, { max: 1 });
    await seed`CREATE TABLE bench_devices (id integer PRIMARY KEY, name text NOT NULL, status text NOT NULL,
      check_ins integer NOT NULL, last_seen_at bigint NOT NULL)`;
    await seed`INSERT INTO bench_devices SELECT i, 'device-' || i, 'active', 0, 0 FROM generate_series(1, ${ROWS}) i`;
    await seed`VACUUM ANALYZE bench_devices`;
    await seed.close();
  }

  const samples = new Map<Driver, number[][]>(drivers.map((driver) => [driver, MEASURES.map(() => [])]));
  for (let round = 1; round <= rounds; round++)
    for (const driver of drivers) {
      const { db, close } = await driver.open(urls.get(driver) ?? "");
      const results = await runMeasures(db);
      await close();
      for (const [index, value] of results.entries()) samples.get(driver)?.[index]?.push(value);
    }

  const folder = join(ROOT, "test-results", "bench-pg-driver");
  mkdirSync(folder, { recursive: true });
  const compiled = new Map<Driver, string>();
  for (const driver of drivers)
    compiled.set(driver, await compiledCheck(driver, await cluster.createDatabase(), folder));

  const cell = (microseconds: number) =>
    `${microseconds.toFixed(0)} µs (${Math.round(1_000_000 / microseconds).toLocaleString("en-US")}/s)`;
  console.log(`\n| measure | ${drivers.map((driver) => driver.name).join(" | ")} |`);
  console.log(`|---|${drivers.map(() => "---").join("|")}|`);
  MEASURES.forEach((measured, index) => {
    const cells = drivers.map((driver) => {
      const values = samples.get(driver)?.[index] ?? [];
      return `${cell(median(values))} [${values.map((value) => value.toFixed(0)).join(", ")}]`;
    });
    console.log(`| ${measured.label} | ${cells.join(" | ")} |`);
  });
  console.log(
    `| inside \`bun build --compile\` output | ${drivers.map((driver) => compiled.get(driver)).join(" | ")} |`,
  );
  if (!postgresJsInstalled)
    console.log("\npostgres.js is not installed (node_modules/postgres): only Bun.sql was measured.");
} finally {
  cluster.stop();
}
