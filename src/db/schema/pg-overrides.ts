/**
 * What the PostgreSQL schema takes differently from the rule for its SQLite column, keyed by
 * "table.column". Read by scripts/generate-pg-schema.ts (which writes src/db/schema-pg) and by the schema
 * parity test; not part of the SQLite schema (index.ts does not export it).
 *
 * The rules, for the columns not named here: text -> text COLLATE "C", except text named `*_at` ->
 * `instant()` (timestamptz(3) read and written as ISO strings); integer -> integer; integer with
 * mode boolean -> boolean; text with mode json -> json (the text as written); integer primary key autoincrement -> bigint
 * identity; blob -> bytea; real -> double precision.
 */
export type PgColumnOverride =
  /** A 64-bit integer read as a number: values past 2^31 - 1, which PostgreSQL's integer refuses. */
  | "bigint"
  /** An ISO instant stored as timestamptz(3), for text columns whose name does not end in `_at`. */
  | "instant"
  /** Plain text (COLLATE "C"), for a `*_at` text column that does not hold an instant. */
  | "text";

export const PG_COLUMN_OVERRIDES: Readonly<Record<string, PgColumnOverride>> = {
  // An IPv4 address as an unsigned 32-bit number (10.0.0.0 is already 167,772,160; 128.0.0.0 is 2^31).
  "devices.vpn_address": "bigint",
  // The WebAuthn signature counter is an unsigned 32-bit number (RFC-defined, authenticator-chosen).
  "mfa_methods.sign_count": "bigint",
  // The outbox's sequence never wraps; SQLite's rowid is 64-bit.
  "webhook_deliveries.event_sequence": "bigint",
  // Instants whose names do not end in `_at`.
  "devices.last_seen": "instant",
  "device_certificates.not_before": "instant",
  "login_failures.locked_until": "instant",
  "users.tokens_valid_after": "instant",
};

/**
 * Tables whose rows the domain orders or picks by SQLite's `rowid` (write order): on PostgreSQL they get a
 * real `rowid bigint GENERATED ALWAYS AS IDENTITY` column with a unique index `<table>_rowid_unique`, so
 * that `${table}.rowid` means the same on both stores.
 */
export const PG_ROWID_TABLES: readonly string[] = ["devices", "device_logs"];
