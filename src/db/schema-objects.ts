import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { CREATE_MIGRATIONS_TABLE, CREATE_UNVERSIONED_MIGRATIONS_TABLE, statementsOf } from "./migrate";

/** A table, index, view or trigger as `sqlite_master` holds it. */
export interface SchemaObject {
  type: string;
  name: string;
  table: string;
  sql: string;
}

/**
 * SQLite's own objects, not the schema's: `sqlite_sequence` (AUTOINCREMENT's counters), the
 * `sqlite_stat` tables ANALYZE writes, and the indexes SQLite makes for PRIMARY KEY and UNIQUE
 * constraints (they have no SQL: they follow from their table's definition, which is compared).
 */
const SQLITE_OWN_OBJECTS = `(type = 'table' AND (name = 'sqlite_sequence' OR name GLOB 'sqlite_stat[1234]'))
  OR (type = 'index' AND sql IS NULL AND name GLOB 'sqlite_autoindex_*')`;

/** Every table, index, view and trigger of a database but SQLite's own, in a fixed order. */
export function readSchemaObjects(sqlite: Database): SchemaObject[] {
  return sqlite
    .query<{ type: string; name: string; table: string; sql: string | null }, []>(
      `SELECT type, name, tbl_name AS "table", sql FROM sqlite_master WHERE NOT (${SQLITE_OWN_OBJECTS}) ORDER BY type, name`,
    )
    .all()
    .map((row) => ({ ...row, sql: row.sql ?? "" }));
}

/**
 * SQL tokens, by the alternative that matches: whitespace and comments; a string literal; an identifier
 * quoted "so", `so` or [so]; a word; any other character.
 */
const SQL_TOKEN =
  /\s+|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'|"((?:[^"]|"")*)"|`((?:[^`]|``)*)`|\[([^\]]*)\]|[\p{L}\p{N}_$]+|[\s\S]/gu;

/**
 * A definition spelled one way, so that what SQLite itself varies in the text it keeps does not count as
 * a change: whitespace and comments between tokens are one space, and a quoted identifier is quoted with
 * double quotes (`ALTER TABLE ... RENAME` rewrites `name` as "name" in every definition that names it).
 * Everything else, letter case and string literals included, is kept as written.
 */
export function normaliseSql(sql: string): string {
  const tokens: string[] = [];
  for (const [token, doubleQuoted, backQuoted, bracketed] of sql.matchAll(SQL_TOKEN)) {
    if (/^(?:\s|--|\/\*)/.test(token)) continue;
    const identifier =
      doubleQuoted?.replaceAll('""', '"') ?? backQuoted?.replaceAll("``", "`") ?? bracketed ?? null;
    tokens.push(identifier === null ? token : `"${identifier.replaceAll('"', '""')}"`);
  }
  return tokens.join(" ");
}

/**
 * The schema that `migrations` define: applied in order to an empty in-memory database, after
 * `bulwark_migrations` (`versioned`: with its `bulwark_version` column, as migrateDatabase makes it).
 * `after` sees the schema after each migration. A statement that fails throws SQLite's error.
 */
export function expectedSchemaObjects(
  migrations: readonly { tag: string; sql: string }[],
  options: { versioned: boolean; after?: (tag: string, objects: SchemaObject[]) => void },
): SchemaObject[] {
  const memory = new Database(":memory:");
  try {
    memory.exec(options.versioned ? CREATE_MIGRATIONS_TABLE : CREATE_UNVERSIONED_MIGRATIONS_TABLE);
    for (const migration of migrations) {
      for (const statement of statementsOf(migration)) memory.exec(statement);
      options.after?.(migration.tag, readSchemaObjects(memory));
    }
    return readSchemaObjects(memory);
  } finally {
    memory.close();
  }
}

/**
 * One SHA-256 of a whole schema as SQLite keeps it (not normalised: a schema with the same digest is the
 * same, one with another may still differ only in spelling).
 */
export function schemaDigest(objects: readonly SchemaObject[]): string {
  return createHash("sha256").update(JSON.stringify(objects)).digest("hex");
}

/** Up to 60 characters of `text` around `index`, on one line. */
function around(text: string, index: number): string {
  const start = Math.max(0, index - 30);
  return `${start > 0 ? "..." : ""}${text.slice(start, index + 30).replace(/\s+/g, " ")}${index + 30 < text.length ? "..." : ""}`;
}

/** Where two normalised definitions part, shown on one line. */
function whereTheyDiffer(actual: string, expected: string): string {
  let index = 0;
  while (index < actual.length && actual[index] === expected[index]) index++;
  return `"${around(actual, index)}" where Bulwark's has "${around(expected, index)}"`;
}

/**
 * What sets `actual` apart from `expected`, one line per object that is extra, missing or defined
 * otherwise (`trigger "make_admin" is not part of Bulwark's schema`), definitions compared normalised;
 * none when they are the same.
 */
export function schemaDifferences(
  actual: readonly SchemaObject[],
  expected: readonly SchemaObject[],
): string[] {
  const nameOf = (object: SchemaObject) => `${object.type} "${object.name}"`;
  const expectedByName = new Map(expected.map((object) => [nameOf(object), object]));
  const actualNames = new Set(actual.map(nameOf));
  const problems: string[] = [];
  for (const object of actual) {
    const wanted = expectedByName.get(nameOf(object));
    if (!wanted) {
      problems.push(`${nameOf(object)} is not part of Bulwark's schema`);
      continue;
    }
    const [sql, wantedSql] = [normaliseSql(object.sql), normaliseSql(wanted.sql)];
    if (object.table !== wanted.table)
      problems.push(
        `${nameOf(object)} belongs to "${object.table}", not to "${wanted.table}" as in Bulwark's schema`,
      );
    else if (sql !== wantedSql)
      problems.push(`${nameOf(object)} differs from Bulwark's schema: ${whereTheyDiffer(sql, wantedSql)}`);
  }
  for (const object of expected)
    if (!actualNames.has(nameOf(object))) problems.push(`${nameOf(object)} of Bulwark's schema is missing`);
  return problems;
}
