import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { CountMismatch, copyDatabase, type TableCount } from "../db/copy/copy-database";
import { CopyFailed, CopyRefused } from "../db/copy/copy-errors";
import { type CopyTable, copyPlan } from "../db/copy/copy-plan";
import { openSource, openTarget } from "../db/copy/open-store";
import { isPostgresUrl } from "../db/copy/pg-store";
import type { Store, StoreSession } from "../db/copy/store";
import { createSecretBox, readKeyFile, type SecretBox, SecretBoxError } from "../lib/secret-box";
import { CommandFailure, type ParsedArgs, UsageError } from "./args";

/**
 * The columns holding secrets sealed with the key file, one value of each tried (as
 * domain/system/check-sealed-secrets.ts does on a served database): webhook signing secrets, TOTP
 * secrets, the VPN server's private key, the organizations' device CA keys.
 */
const SEALED_COLUMNS: readonly [table: string, column: string][] = [
  ["webhooks", "secret"],
  ["mfa_methods", "secret"],
  ["server_keys", "sealedPrivateKey"],
  ["device_cas", "sealedPrivateKey"],
];
const SEALED_PREFIX = "sealed:";

/**
 * `bulwark db copy --from SOURCE --to TARGET [--key-file FILE]`: copies a whole installation between
 * SQLite files and PostgreSQL databases, either way, into an empty target (docs/postgresql.md). Refusals
 * (a target with rows, a source this version cannot read, a key that does not open the source's
 * secrets) exit 2 with nothing written; a failure exits 1 with the target as it was found.
 */
export async function dbCopyCommand(args: ParsedArgs): Promise<void> {
  const from = args.flags.get("from");
  const to = args.flags.get("to");
  if (!from || !to)
    throw new UsageError(
      "db copy needs --from SOURCE and --to TARGET (each a SQLite file or a postgres:// URL)",
    );
  if (from === to) throw new UsageError("--from and --to name the same database");
  for (const location of [from, to])
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !isPostgresUrl(location))
      throw new UsageError(
        `${location.split("//")[0]}// is not a store db copy knows: give a SQLite file's path or a postgres:// URL`,
      );
  const keyPath = args.flags.get("key-file") ?? (isPostgresUrl(from) ? undefined : `${from}.key`);
  if (!keyPath)
    throw new UsageError(
      "the source is PostgreSQL: name the key file that seals its secrets with --key-file FILE",
    );

  const tables = copyPlan();
  const source = await refusedAsUsage(() => openSource(from));
  try {
    const key = readKey(keyPath);
    const secrets = createSecretBox(key.bytes);
    const targetKeyPath = isPostgresUrl(to) ? null : `${to}.key`;
    if (targetKeyPath && existsSync(targetKeyPath) && !sameKey(readKey(targetKeyPath).bytes, key.bytes))
      throw new UsageError(
        `${targetKeyPath} exists and holds another key than ${keyPath}: move it away, or copy to another file`,
      );
    const sealed = await source.read((session) => sealedSamples(session, tables));
    if (!opensAll(secrets, sealed))
      throw new UsageError(
        `${keyPath} does not open the secrets sealed in ${source.label}: name that installation's key file with --key-file`,
      );
    const target = await refusedAsUsage(() => openTarget(to, tables));
    const progress = new ProgressLine(process.stdout.isTTY === true);
    const started = performance.now();
    let counts: TableCount[];
    try {
      counts = await copyDatabase(source, target, tables, (table, copied, total) =>
        progress.show(table, copied, total),
      );
    } catch (error) {
      progress.end();
      const left = await target.discard();
      if (error instanceof CountMismatch) console.log(countTable(error.counts).join("\n"));
      if (error instanceof CopyRefused) throw new UsageError(error.message);
      if (error instanceof CopyFailed) throw new CommandFailure(`copy failed: ${error.message}; ${left}`);
      throw error;
    }
    progress.end();
    const seconds = (performance.now() - started) / 1000;
    try {
      if (targetKeyPath && !existsSync(targetKeyPath)) {
        writeFileSync(targetKeyPath, key.text, { mode: 0o600, flag: "wx" });
        chmodSync(targetKeyPath, 0o600);
      }
      const copiedSealed = await target.read((session) => sealedSamples(session, tables));
      if (!opensAll(secrets, copiedSealed))
        throw new CommandFailure(
          `${keyPath} does not open the secrets sealed in ${target.label} after the copy`,
        );
      report(source, target.label, counts, seconds, {
        keyPath,
        targetKeyPath,
        sealedKinds: copiedSealed.length,
      });
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** What the copy prints at its end: the stores, the time, each table's rows in both, the key file. */
function report(
  source: Store,
  targetLabel: string,
  counts: readonly TableCount[],
  seconds: number,
  key: { keyPath: string; targetKeyPath: string | null; sealedKinds: number },
): void {
  const rows = counts.reduce((sum, count) => sum + count.source, 0);
  const lines = [
    `Copied ${source.label} to ${targetLabel}: ${number(rows)} rows in ${seconds.toFixed(1)} s (${number(Math.round(rows / Math.max(seconds, 0.001)))} rows/s).`,
    ...countTable(counts),
    `Row counts match in all ${counts.length} tables; device_counts agrees with the copied devices, and each organization's device_count and device_list_version with the source's.`,
    key.sealedKinds > 0
      ? `The key file ${key.keyPath} opens the secrets sealed in the copy (${key.sealedKinds} of their kinds tried).`
      : `The copy holds no sealed secrets yet; they will be sealed with ${key.keyPath}.`,
    key.targetKeyPath
      ? `The key file is ${key.targetKeyPath} (the same key as ${key.keyPath}, owner-only): keep it beside the database.`
      : `The secrets in ${targetLabel} are sealed with ${key.keyPath}: every server on this database needs that key file (database.key_file).`,
  ];
  console.log(lines.join("\n"));
}

/** One line per table: its rows in the source and in the target. */
function countTable(counts: readonly TableCount[]): string[] {
  const width = Math.max(...counts.map((count) => count.table.length), "table".length);
  const cell = (value: string) => value.padStart(10);
  return [
    `  ${"table".padEnd(width)}${cell("source")}${cell("target")}`,
    ...counts.map(
      (count) =>
        `  ${count.table.padEnd(width)}${cell(number(count.source))}${cell(number(count.target))}${
          count.source !== count.target ? "  MISMATCH" : ""
        }`,
    ),
  ];
}

/**
 * A table's progress on a terminal, rewritten in place after each batch and kept once the table is done.
 * Not a terminal (a log, a pipe): nothing; the table of counts at the end says it all.
 */
class ProgressLine {
  private current: string | null = null;

  constructor(private readonly isTerminal: boolean) {}

  show(table: string, copied: number, total: number): void {
    if (!this.isTerminal) return;
    if (this.current !== null && this.current !== table) process.stdout.write("\n");
    this.current = table;
    process.stdout.write(`\r\x1b[2K  ${table}: ${number(copied)} of ${number(total)} rows`);
  }

  end(): void {
    if (this.isTerminal && this.current !== null) process.stdout.write("\n");
    this.current = null;
  }
}

/** One sealed value of each kind the store holds. */
async function sealedSamples(session: StoreSession, tables: readonly CopyTable[]): Promise<string[]> {
  const samples: string[] = [];
  for (const [tableName, column] of SEALED_COLUMNS) {
    const table = tables.find((candidate) => candidate.name === tableName);
    if (!table) throw new Error(`the schema has no table ${tableName}`);
    const sample = await session.firstValueStartingWith(table, column, SEALED_PREFIX);
    if (sample) samples.push(sample);
  }
  return samples;
}

function opensAll(secrets: SecretBox, sealed: readonly string[]): boolean {
  try {
    for (const value of sealed) secrets.open(value);
    return true;
  } catch (error) {
    if (error instanceof SecretBoxError) return false;
    throw error;
  }
}

/** The key file's text (copied as it is) and key; a missing or malformed file is a usage error. */
function readKey(path: string): { text: string; bytes: Uint8Array } {
  let bytes: Uint8Array | null;
  try {
    bytes = readKeyFile(path);
  } catch (error) {
    throw new UsageError(`${path} is not a Bulwark key file: ${(error as Error).message}`);
  }
  if (!bytes)
    throw new UsageError(`key file ${path} does not exist: name the installation's key with --key-file`);
  return { text: readFileSync(path, "utf8"), bytes };
}

function sameKey(one: Uint8Array, other: Uint8Array): boolean {
  return Buffer.from(one).equals(Buffer.from(other));
}

async function refusedAsUsage<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof CopyRefused) throw new UsageError(error.message);
    if (error instanceof CopyFailed) throw new CommandFailure(error.message);
    throw error;
  }
}

function number(value: number): string {
  return value.toLocaleString("en-US");
}
