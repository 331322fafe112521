import type { Database } from "bun:sqlite";
import { VERSION } from "../version";
import { expectedSchemaDigests } from "./expected-schema-digests" with { type: "macro" };
import { assertUsableSchema, DatabaseSchemaError, hasVersionColumn, readDatabaseSchema } from "./migrate";
import { embeddedMigrations } from "./migrations.generated";
import {
  expectedSchemaObjects,
  readSchemaObjects,
  type SchemaObject,
  schemaDifferences,
  schemaDigest,
} from "./schema-objects";

/**
 * The digest of the schema each prefix of the embedded migrations defines, computed when the executable
 * is built: a database whose schema has its level's digest needs no in-memory rebuild (~10 ms) at start.
 */
const EXPECTED_DIGESTS: Readonly<Record<string, string>> = expectedSchemaDigests();

/**
 * Whether a database's schema, as SQLite keeps it, is byte for byte the one the embedded migrations up to
 * its latest define (with the digest computed at build time); false says only that it needs comparing.
 */
export function hasExpectedSchemaDigest(sqlite: Database, appliedTags: readonly string[]): boolean {
  const level = embeddedMigrations.slice(0, appliedTags.length);
  const expected = EXPECTED_DIGESTS[appliedTags.at(-1) ?? ""];
  return (
    expected !== undefined &&
    level.length === appliedTags.length &&
    level.every((migration, index) => migration.tag === appliedTags[index]) &&
    hasVersionColumn(sqlite) &&
    schemaDigest(readSchemaObjects(sqlite)) === expected
  );
}

/**
 * What sets a Bulwark database's tables, indexes, views and triggers apart from the schema its recorded
 * migrations (`appliedTags`, all known to this executable) define, one line per object (an added trigger
 * could act on every sign-in); none when it is that schema. An empty database has nothing to compare.
 */
export function schemaProblems(sqlite: Database, appliedTags: readonly string[]): string[] {
  if (hasExpectedSchemaDigest(sqlite, appliedTags)) return [];
  const actual = readSchemaObjects(sqlite);
  if (actual.length === 0) return [];
  const recorded = new Set(appliedTags);
  const defining = embeddedMigrations.filter((migration) => recorded.has(migration.tag));
  let expected: SchemaObject[];
  try {
    expected = expectedSchemaObjects(defining, { versioned: hasVersionColumn(sqlite) });
  } catch (error) {
    return [
      `its recorded migrations (${appliedTags.join(", ")}) do not build a schema: ${(error as Error).message}`,
    ];
  }
  return schemaDifferences(actual, expected);
}

/**
 * Refuses a database that is another program's, a newer Bulwark's (assertUsableSchema), or whose
 * schema is not the one its recorded migrations define (schemaProblems): a DatabaseSchemaError with a
 * line `<label> refused: <problem>` per object, before anything is written.
 */
export function assertBulwarkSchema(sqlite: Database, label: string): void {
  // One read transaction: another process migrating the file meanwhile commits each migration with its
  // record, so the recorded migrations and the schema are read as of one commit.
  const problems = sqlite
    .transaction(() => {
      const recorded = readDatabaseSchema(sqlite, label);
      assertUsableSchema(recorded, label, VERSION);
      return schemaProblems(sqlite, recorded.appliedTags);
    })
    .deferred();
  if (problems.length > 0)
    throw new DatabaseSchemaError(problems.map((problem) => `${label} refused: ${problem}`).join("\n"));
}
