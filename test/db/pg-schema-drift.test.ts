/**
 * src/db/schema-pg is generated from src/db/schema (scripts/generate-pg-schema.ts) and checked in: this
 * fails when what is checked in differs from what the generator writes now, so the two schemas cannot
 * drift apart (a change to the SQLite schema needs `npm run db:generate`).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { isGeneratedFile, PG_SCHEMA_FOLDER } from "../../scripts/generate-pg-schema";
import type * as sqliteTables from "../../src/db/schema";
import type * as pgTables from "../../src/db/schema-pg";

/** Whether two types are the same (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type TableName = {
  [K in keyof typeof sqliteTables]: (typeof sqliteTables)[K] extends SQLiteTable ? K : never;
}[keyof typeof sqliteTables];
/** The tables whose PostgreSQL rows are typed otherwise than their SQLite rows (the rowid column aside). */
type RowTypeMismatches = {
  [K in TableName]: Equal<
    {
      [P in Exclude<
        keyof (typeof pgTables)[K]["$inferSelect"],
        "rowid"
      >]: (typeof pgTables)[K]["$inferSelect"][P];
    },
    (typeof sqliteTables)[K]["$inferSelect"]
  > extends true
    ? never
    : K;
}[TableName];
// Checked by `npm run typecheck`: a table named here reads rows of another TypeScript type on PostgreSQL.
const rowTypesMatch: [RowTypeMismatches] extends [never] ? true : RowTypeMismatches = true;

/** The generated files of a folder (those with the generator's header), by name. */
function generatedFiles(folder: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(folder)
      .filter((name) => name.endsWith(".ts") && isGeneratedFile(join(folder, name)))
      .sort()
      .map((name) => [name, readFileSync(join(folder, name), "utf8")]),
  );
}

test(
  "the checked-in PostgreSQL schema is exactly what the generator writes from the SQLite schema",
  () => {
    const folder = mkdtempSync(join(tmpdir(), "bulwark-schema-pg-"));
    try {
      const run = Bun.spawnSync([process.execPath, "run", "scripts/generate-pg-schema.ts", "--out", folder], {
        cwd: join(import.meta.dir, "../.."),
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(run.stderr.toString()).toBe("");
      expect(run.exitCode).toBe(0);
      const fresh = generatedFiles(folder);
      // Every file of src/db/schema, and the index.
      expect(Object.keys(fresh)).toContain("devices.ts");
      expect(Object.keys(fresh)).toContain("index.ts");
      // On a difference: run `npm run db:generate` (the generator, then drizzle-kit for a migration).
      expect(generatedFiles(PG_SCHEMA_FOLDER)).toEqual(fresh);
      // (And the generated tables' row types are the SQLite ones: see rowTypesMatch, which tsc checks.)
      expect(rowTypesMatch).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },
  { timeout: 60_000 },
);
