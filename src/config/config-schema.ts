import { type Static, Type } from "@sinclair/typebox";

/** Upper bounds keep every duration a valid date and every job's arithmetic in range. */
const YEAR = 365 * 86400;
const MAX_RATE = 1_000_000_000;

/**
 * Every configuration key, its type and its default. config.example.toml documents the same keys;
 * a test keeps the two in step.
 */
/** vpn.endpoint's default: a placeholder that resolves nowhere, until the operator names their server. */
export const EXAMPLE_VPN_ENDPOINT = "vpn.example.com:51820";

export const ConfigSchema = Type.Object({
  server: Type.Object({
    host: Type.String({ default: "127.0.0.1", minLength: 1 }),
    port: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
    /** Empty: follows the listen address (`effectiveBaseUrl`). */
    base_url: Type.String({ default: "", pattern: "^(https?://[^\\s?#]+)?$" }),
    /** Honour X-Forwarded-For and Client-Cert, only from the peers in trusted_proxies (empty: loopback). */
    trust_proxy: Type.Boolean({ default: false }),
    /** IP addresses and CIDR networks of the proxies; checked by load-config.ts. */
    trusted_proxies: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], maxItems: 100 }),
    /** PEM files; both set: the API is served over HTTPS only (checked by load-config.ts and at listen). */
    tls_cert: Type.String({ default: "" }),
    tls_key: Type.String({ default: "" }),
    /** Browser origins (scheme://host[:port]) allowed to call the API from their pages (CORS); checked by load-config.ts. */
    cors_origins: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { default: [], maxItems: 50 }),
    /** This server's name among the replicas on one database (health, metrics, logs, the job lease); empty: `<host name>:<port>`. */
    replica_name: Type.String({ default: "", maxLength: 200, pattern: "^[^\\s]*$" }),
  }),
  database: Type.Object({
    path: Type.String({ default: "./data/bulwark.db", minLength: 1 }),
    synchronous: Type.Union([Type.Literal("full"), Type.Literal("normal")], { default: "full" }),
    /** The key file that seals stored secrets; empty: `<path>.key` beside the database (keyFileOf). */
    key_file: Type.String({ default: "" }),
    /** A PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE); set: the server runs on it, not on `path`. */
    url: Type.String({ default: "", maxLength: 4000 }),
    /** A file holding the PostgreSQL password (one line), in place of a password in `url`. */
    password_file: Type.String({ default: "" }),
    /**
     * PostgreSQL: seconds a request waits for the database (a connection, a statement, a lock) before
     * answering 503 database_unavailable; also each connection's statement_timeout (docs/postgresql.md).
     */
    timeout_seconds: Type.Integer({ default: 5, minimum: 1, maximum: 600 }),
    /** PostgreSQL: the most connections this server holds open. */
    pool_size: Type.Integer({ default: 10, minimum: 2, maximum: 1000 }),
  }),
  auth: Type.Object({
    access_token_ttl_seconds: Type.Integer({ default: 86400, minimum: 60, maximum: YEAR }),
    refresh_token_ttl_seconds: Type.Integer({ default: 2592000, minimum: 60, maximum: 10 * YEAR }),
    api_key_default_days: Type.Integer({ default: 90, minimum: 1, maximum: 3650 }),
    login_max_failures: Type.Integer({ default: 5, minimum: 1, maximum: 1_000_000 }),
    login_lockout_seconds: Type.Integer({ default: 900, minimum: 1, maximum: YEAR }),
    password_hash_memory_kib: Type.Integer({ default: 65536, minimum: 64, maximum: 4194304 }),
    password_hash_iterations: Type.Integer({ default: 2, minimum: 1, maximum: 20 }),
    /** Origins allowed to use passkeys; empty: the origin of server.base_url. Checked by load-config.ts. */
    webauthn_origins: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
      default: [],
      maxItems: 50,
    }),
    /** Lets OIDC issuers on plain http be used: for tests and labs only, never in production. */
    oidc_allow_insecure_issuers: Type.Boolean({ default: false }),
    /**
     * Lets OIDC providers be reached on loopback and private addresses (an on-prem IdP, a test provider).
     * Link-local addresses (cloud metadata) are refused regardless.
     */
    oidc_allow_private_issuers: Type.Boolean({ default: false }),
  }),
  rate_limit: Type.Object({
    authenticated_per_minute: Type.Integer({ default: 1000, minimum: 1, maximum: MAX_RATE }),
    unauthenticated_per_minute: Type.Integer({ default: 100, minimum: 1, maximum: MAX_RATE }),
    enterprise_per_minute: Type.Integer({ default: 10000, minimum: 1, maximum: MAX_RATE }),
    enrollments_per_minute: Type.Integer({ default: 1000, minimum: 1, maximum: MAX_RATE }),
  }),
  devices: Type.Object({
    offline_after_seconds: Type.Integer({ default: 900, minimum: 1, maximum: YEAR }),
    wipe_timeout_seconds: Type.Integer({ default: 259200, minimum: 1, maximum: YEAR }),
    log_retention_days: Type.Integer({ default: 90, minimum: 1, maximum: 36500 }),
    /** A check-in that changes nothing reported is logged at most this often; 0 logs every check-in. */
    checkin_log_interval_seconds: Type.Integer({ default: 3600, minimum: 0, maximum: YEAR }),
    /**
     * Minimum OS versions by platform (windows, macos, android, ios: over the built-in minimums) or Linux
     * distribution (its os-release ID: ubuntu, debian, ...); keys and versions checked by load-config.ts.
     */
    min_os_versions: Type.Record(Type.String(), Type.String(), { default: {} }),
  }),
  jobs: Type.Object({
    scan_interval_seconds: Type.Integer({ default: 60, minimum: 1, maximum: 86400 }),
  }),
  vpn: Type.Object({
    /** host:port, an IPv6 address in brackets ([2001:db8::1]:51820); checked by load-config.ts. */
    endpoint: Type.String({ default: EXAMPLE_VPN_ENDPOINT, minLength: 1 }),
    address_pool: Type.String({ default: "10.100.0.0/16", pattern: "^[0-9.]+/[0-9]{1,2}$" }),
    /**
     * Each organization's block of the pool (20: a /16 pool holds 16 organizations of 4,094 devices). Left
     * unset with a pool smaller than that, the pool's own length (one organization); checked by load-config.ts.
     */
    organization_prefix_length: Type.Integer({ default: 20, minimum: 0, maximum: 30 }),
    /** Empty: Bulwark generates and keeps the server's key pair; set when the WireGuard server runs elsewhere. */
    server_public_key: Type.String({ default: "" }),
    /** CIDRs routed through the tunnel; empty: 0.0.0.0/0 under a policy with vpn_required, else the pool. */
    allowed_ips: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], maxItems: 100 }),
    /** DNS servers (or search domains) for the tunnel; may be empty. */
    dns: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { default: [], maxItems: 20 }),
    persistent_keepalive: Type.Integer({ default: 25, minimum: 0, maximum: 65535 }),
  }),
  webhooks: Type.Object({
    retry_schedule_seconds: Type.Array(Type.Integer({ minimum: 0, maximum: 30 * 86400 }), {
      default: [10, 60, 300, 1800, 7200, 21600, 43200, 86400],
      maxItems: 50,
    }),
    timeout_seconds: Type.Integer({ default: 10, minimum: 1, maximum: 300 }),
    allow_private_targets: Type.Boolean({ default: false }),
    retention_days: Type.Integer({ default: 30, minimum: 1, maximum: 36500 }),
  }),
  log: Type.Object({
    /** auto: pretty on a terminal, json otherwise. */
    format: Type.Union([Type.Literal("auto"), Type.Literal("json"), Type.Literal("pretty")], {
      default: "auto",
    }),
    level: Type.Union(
      [Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")],
      { default: "info" },
    ),
  }),
  metrics: Type.Object({
    enabled: Type.Boolean({ default: false }),
    /** Empty: GET /metrics needs no credential (keep it off the public network then). */
    token: Type.String({ default: "" }),
  }),
  admin: Type.Object({
    email: Type.String({ default: "" }),
    password: Type.String({ default: "" }),
    org: Type.String({ default: "Default", minLength: 1 }),
  }),
});

export type Config = Static<typeof ConfigSchema>;

/** The key file that seals the database's stored secrets: `database.key_file`, else `<database.path>.key`. */
export function keyFileOf(database: { path: string; key_file: string }): string {
  return database.key_file === "" ? `${database.path}.key` : database.key_file;
}

/** Whether the server runs on PostgreSQL (`database.url` set) rather than the SQLite file. */
export function isPostgresConfig(database: { url: string }): boolean {
  return database.url !== "";
}
