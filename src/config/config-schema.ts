import { type Static, Type } from "@sinclair/typebox";

/**
 * Every configuration key, its type and its default. config.example.toml documents the same keys;
 * a test keeps the two in step.
 */
export const ConfigSchema = Type.Object({
  server: Type.Object({
    host: Type.String({ default: "127.0.0.1", minLength: 1 }),
    port: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
    /** Empty: follows the listen address (`effectiveBaseUrl`). */
    base_url: Type.String({ default: "", pattern: "^(https?://[^\\s]+)?$" }),
    trust_proxy: Type.Boolean({ default: false }),
  }),
  database: Type.Object({
    path: Type.String({ default: "./data/bulwark.db", minLength: 1 }),
    synchronous: Type.Union([Type.Literal("full"), Type.Literal("normal")], { default: "full" }),
  }),
  auth: Type.Object({
    access_token_ttl_seconds: Type.Integer({ default: 86400, minimum: 60 }),
    refresh_token_ttl_seconds: Type.Integer({ default: 2592000, minimum: 60 }),
    api_key_default_days: Type.Integer({ default: 90, minimum: 1, maximum: 3650 }),
    login_max_failures: Type.Integer({ default: 5, minimum: 1 }),
    login_lockout_seconds: Type.Integer({ default: 900, minimum: 1 }),
    password_hash_memory_kib: Type.Integer({ default: 65536, minimum: 64, maximum: 4194304 }),
    password_hash_iterations: Type.Integer({ default: 2, minimum: 1, maximum: 20 }),
  }),
  rate_limit: Type.Object({
    authenticated_per_minute: Type.Integer({ default: 1000, minimum: 1 }),
    unauthenticated_per_minute: Type.Integer({ default: 100, minimum: 1 }),
    enterprise_per_minute: Type.Integer({ default: 10000, minimum: 1 }),
    enrollments_per_minute: Type.Integer({ default: 1000, minimum: 1 }),
  }),
  devices: Type.Object({
    offline_after_seconds: Type.Integer({ default: 900, minimum: 1 }),
    wipe_timeout_seconds: Type.Integer({ default: 259200, minimum: 1 }),
    log_retention_days: Type.Integer({ default: 90, minimum: 1 }),
  }),
  jobs: Type.Object({
    scan_interval_seconds: Type.Integer({ default: 60, minimum: 1 }),
  }),
  vpn: Type.Object({
    endpoint: Type.String({ default: "vpn.example.com:51820", pattern: "^[^\\s:]+:[0-9]{1,5}$" }),
    address_pool: Type.String({ default: "10.100.0.0/16", pattern: "^[0-9.]+/[0-9]{1,2}$" }),
  }),
  webhooks: Type.Object({
    retry_schedule_seconds: Type.Array(Type.Integer({ minimum: 0 }), {
      default: [10, 60, 300, 1800, 7200, 21600, 43200, 86400],
      maxItems: 50,
    }),
    timeout_seconds: Type.Integer({ default: 10, minimum: 1, maximum: 300 }),
    allow_private_targets: Type.Boolean({ default: false }),
    retention_days: Type.Integer({ default: 30, minimum: 1 }),
  }),
  admin: Type.Object({
    email: Type.String({ default: "" }),
    password: Type.String({ default: "" }),
    org: Type.String({ default: "Default", minLength: 1 }),
  }),
});

export type Config = Static<typeof ConfigSchema>;
