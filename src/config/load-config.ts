import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse as parseToml } from "smol-toml";
import { parseIpNetwork } from "../lib/ip-networks";
import { isIP } from "../lib/ip-version";
import { hostRange, parseCidr } from "../lib/ipv4";
import { nearestName } from "../lib/nearest-name";
import { redactPgUrl } from "../lib/redact-url";
import { isWireGuardKey } from "../lib/wireguard";
import { type Config, ConfigSchema } from "./config-schema";

/** Raised for any configuration problem; the message names the key. */
export class ConfigError extends Error {}

export interface LoadConfigOptions {
  /** Explicit --config path; an error if it does not exist. */
  file?: string;
  /** Environment to read `BULWARK_*` overrides from. */
  env?: Record<string, string | undefined>;
  /** Values applied last, for tests (section -> key -> value). */
  overrides?: DeepPartial<Config>;
  /** Working directory for the implicit ./bulwark.toml. */
  cwd?: string;
}

export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K];
};

/** Loads defaults, then the TOML file, then `BULWARK_<SECTION>_<KEY>` variables; validates and freezes. */
export function loadConfig(options: LoadConfigOptions = {}): Readonly<Config> {
  return loadExplainedConfig(options).config;
}

/** The configuration, and where each key's value came from. */
export interface ExplainedConfig {
  config: Readonly<Config>;
  /** The TOML file read, if any. */
  file: string | undefined;
  /** `section.key` -> `file`, the environment variable's name, or `override`; absent: the default. */
  sources: ReadonlyMap<string, string>;
}

/** loadConfig, also saying where each value came from (`bulwark config check`). */
export function loadExplainedConfig(options: LoadConfigOptions = {}): ExplainedConfig {
  const env = options.env ?? process.env;
  const raw: Record<string, Record<string, unknown>> = {};
  const sources = new Map<string, string>();
  const filePath =
    options.file ??
    (existsSync(`${options.cwd ?? "."}/bulwark.toml`) ? `${options.cwd ?? "."}/bulwark.toml` : undefined);
  if (filePath) {
    if (!existsSync(filePath)) throw new ConfigError(`config file ${filePath} does not exist`);
    let text: string;
    try {
      text = readFileSync(filePath, "utf8");
    } catch (error) {
      const code = (error as { code?: string }).code;
      const cause = code === "EACCES" || code === "EPERM" ? "permission denied" : (error as Error).message;
      throw new ConfigError(`config file ${filePath} cannot be read: ${cause}`);
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = parseToml(text) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(
        `config file ${filePath} is not valid TOML: ${(error as Error).message.split("\n")[0]}`,
      );
    }
    for (const [section, values] of Object.entries(parsed)) {
      const sectionSchema = ConfigSchema.properties[section as keyof Config];
      if (!sectionSchema) throw new ConfigError(`unknown config section [${section}] in ${filePath}`);
      if (typeof values !== "object" || values === null || Array.isArray(values)) {
        throw new ConfigError(`config key ${section} must be a table`);
      }
      for (const [key, value] of Object.entries(values)) {
        if (!(key in sectionSchema.properties))
          throw new ConfigError(`unknown config key ${section}.${key} in ${filePath}`);
        raw[section] ??= {};
        (raw[section] as Record<string, unknown>)[key] = value;
        sources.set(`${section}.${key}`, "file");
      }
    }
  }
  refuseUnknownVariables(env);
  for (const [section, sectionSchema] of Object.entries(ConfigSchema.properties) as [string, TObject][]) {
    for (const [key, keySchema] of Object.entries(sectionSchema.properties)) {
      const variable = `BULWARK_${section}_${key}`.toUpperCase();
      const text = env[variable];
      // Empty is unset: docker compose passes `${VAR}` of an unset variable as "", which must not
      // silently clear what the file sets (a metrics token, the TLS files).
      if (text === undefined || text === "") continue;
      raw[section] ??= {};
      (raw[section] as Record<string, unknown>)[key] = parseEnvValue(
        variable,
        `${section}.${key}`,
        text,
        keySchema,
      );
      sources.set(`${section}.${key}`, variable);
    }
  }
  for (const [section, values] of Object.entries(options.overrides ?? {})) {
    raw[section] = { ...raw[section], ...(values as Record<string, unknown>) };
    for (const key of Object.keys(values as object)) sources.set(`${section}.${key}`, "override");
  }
  refuseNumericVersions(raw.devices?.min_os_versions);
  const config = Value.Default(ConfigSchema, Value.Clone(fillSections(raw))) as Config;
  // Check first: listing errors walks the schema with a generator, ~1 ms of every start.
  const firstError = Value.Check(ConfigSchema, config)
    ? undefined
    : Value.Errors(ConfigSchema, config).First();
  if (firstError) {
    const key = firstError.path
      .replace(/^\//, "")
      .replace(/\/\d+$/, "")
      .replaceAll("/", ".");
    throw new ConfigError(
      `invalid config ${key}: ${describeConfigError(firstError.schema, firstError.message)} (got ${JSON.stringify(firstError.value)})`,
    );
  }
  checkSemantics(config, sources);
  return { config: deepFreeze(config), file: filePath, sources };
}

/** A PostgreSQL installation needs a URL PostgreSQL understands and a key file every replica shares. */
function checkDatabase(database: Config["database"]): void {
  if (database.url === "") {
    if (database.password_file !== "")
      throw new ConfigError("invalid config database.password_file: it goes with database.url (PostgreSQL)");
    return;
  }
  const shown = redactPgUrl(database.url);
  let url: URL | undefined;
  try {
    url = new URL(database.url);
  } catch {}
  if (!url || !/^postgres(ql)?:$/.test(url.protocol))
    throw new ConfigError(
      `invalid config database.url: "${shown}" is not a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE)`,
    );
  if (database.key_file === "")
    throw new ConfigError(
      "invalid config database.key_file: required with database.url (the key that seals stored secrets; every replica needs the same file)",
    );
  if (database.password_file !== "" && url.password !== "")
    throw new ConfigError(
      "invalid config database.password_file: database.url already holds a password (keep one of them)",
    );
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Rules a schema cannot express; fills in what a default leaves to another key. */
function checkSemantics(config: Config, sources: ReadonlyMap<string, string>): void {
  const pool = parseCidr(config.vpn.address_pool);
  if (!pool) {
    throw new ConfigError(
      `invalid config vpn.address_pool: expected a network address like 10.100.0.0/16, got "${config.vpn.address_pool}"`,
    );
  }
  const range = hostRange(pool);
  if (range.first > range.last)
    throw new ConfigError(
      "invalid config vpn.address_pool: the pool has no address for devices (use /30 or larger)",
    );
  if (config.vpn.organization_prefix_length < pool.prefixLength) {
    // The default (20) with a smaller pool: one organization takes the whole pool, as before subnets.
    if (!sources.has("vpn.organization_prefix_length"))
      config.vpn.organization_prefix_length = pool.prefixLength;
    else
      throw new ConfigError(
        `invalid config vpn.organization_prefix_length: /${config.vpn.organization_prefix_length} subnets do not fit in vpn.address_pool ${config.vpn.address_pool} (use ${pool.prefixLength} to 30)`,
      );
  }
  const host = config.server.host;
  if (
    /^[\d.]+$/.test(host) ? isIP(host) !== 4 : host.includes(":") ? isIP(host) !== 6 : !HOST_NAME.test(host)
  )
    throw new ConfigError(`invalid config server.host: "${host}" is not an IP address or host name`);
  const endpointProblem = describeEndpointProblem(config.vpn.endpoint);
  if (endpointProblem)
    throw new ConfigError(`invalid config vpn.endpoint: ${endpointProblem} (got "${config.vpn.endpoint}")`);
  if (config.server.base_url !== "" && !URL.canParse(config.server.base_url))
    throw new ConfigError(`invalid config server.base_url: "${config.server.base_url}" is not a URL`);
  checkDatabase(config.database);
  if ((config.server.tls_cert === "") !== (config.server.tls_key === ""))
    throw new ConfigError(
      `invalid config server.${config.server.tls_cert === "" ? "tls_cert" : "tls_key"}: server.tls_cert and server.tls_key go together (set both for HTTPS, or neither)`,
    );
  for (const proxy of config.server.trusted_proxies) {
    if (!parseIpNetwork(proxy))
      throw new ConfigError(
        `invalid config server.trusted_proxies: "${proxy}" is not an IP address or a network such as 10.0.0.0/8 or 2001:db8::/32 (no bits set beyond the prefix)`,
      );
  }
  if (config.server.trusted_proxies.length > 0 && !config.server.trust_proxy)
    throw new ConfigError(
      "invalid config server.trusted_proxies: it takes effect only with server.trust_proxy = true (set that too, or empty the list)",
    );
  if (config.vpn.server_public_key !== "" && !isWireGuardKey(config.vpn.server_public_key))
    throw new ConfigError(
      `invalid config vpn.server_public_key: expected a WireGuard public key (the base64 of 32 bytes, as \`wg pubkey\` prints it), got "${config.vpn.server_public_key}"`,
    );
  for (const network of config.vpn.allowed_ips) {
    if (!isCidr(network))
      throw new ConfigError(
        `invalid config vpn.allowed_ips: "${network}" is not a network such as 10.0.0.0/8 or 2001:db8::/32`,
      );
  }
  for (const server of config.vpn.dns) {
    if (isIP(server) === 0 && !HOST_NAME.test(server))
      throw new ConfigError(
        `invalid config vpn.dns: "${server}" is neither an IP address nor a search domain`,
      );
  }
  for (const [key, origins] of [
    ["auth.webauthn_origins", config.auth.webauthn_origins],
    ["server.cors_origins", config.server.cors_origins],
  ] as const) {
    for (const origin of origins) {
      const url = URL.canParse(origin) ? new URL(origin) : null;
      if (!url || !["http:", "https:"].includes(url.protocol) || url.origin !== origin.replace(/\/$/, ""))
        throw new ConfigError(
          `invalid config ${key}: "${origin}" is not an origin (scheme://host[:port], no path)`,
        );
    }
  }
  checkMinimumOsVersions(config.devices.min_os_versions);
  const token = config.metrics.token;
  if (token !== "" && (token.length < 16 || /\s/.test(token)))
    throw new ConfigError(
      "invalid config metrics.token: use at least 16 characters and no spaces (for example the output of `openssl rand -hex 32`)",
    );
}

const MIN_OS_VERSIONS = "devices.min_os_versions";
const OS_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const OS_VERSION = /^\d{1,9}(\.\d{1,9}){0,3}$/;

/** A TOML number would lose a version's zeros (22.10 reads as 22.1): versions are written as strings. */
function refuseNumericVersions(versions: unknown): void {
  if (typeof versions !== "object" || versions === null) return;
  for (const [name, version] of Object.entries(versions)) {
    if (typeof version === "number")
      throw new ConfigError(
        `invalid config ${MIN_OS_VERSIONS}.${name}: write the version as a string ("${version}"): a number loses its zeros (22.10 would read 22.1)`,
      );
  }
}

/** Each entry names a platform or a Linux distribution's os-release ID, with a dotted version. */
function checkMinimumOsVersions(versions: Readonly<Record<string, string>>): void {
  for (const [name, version] of Object.entries(versions)) {
    if (name === "linux")
      throw new ConfigError(
        `invalid config ${MIN_OS_VERSIONS}.linux: Linux is judged per distribution; name its os-release ID instead (ubuntu = "22.04", debian = "12")`,
      );
    if (!OS_NAME.test(name))
      throw new ConfigError(
        `invalid config ${MIN_OS_VERSIONS}: "${name}" is not a platform (windows, macos, android, ios) or a distribution's os-release ID (lower case, like ubuntu)`,
      );
    if (!OS_VERSION.test(version))
      throw new ConfigError(
        `invalid config ${MIN_OS_VERSIONS}.${name}: "${version}" is not a version such as 22.04 or 12`,
      );
  }
}

/** An IPv4 or IPv6 network in CIDR notation (address/prefix, the prefix within the family's bits). */
function isCidr(text: string): boolean {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!match) return false;
  const family = isIP(match[1] ?? "");
  const prefix = Number(match[2]);
  return family !== 0 && prefix <= (family === 4 ? 32 : 128);
}

/** An enum's error lists its values; other errors keep TypeBox's wording. */
function describeConfigError(schema: TSchema, message: string): string {
  const variants = schema.anyOf as TSchema[] | undefined;
  if (variants?.every((variant) => "const" in variant))
    return `must be one of ${variants.map((variant) => String(variant.const)).join(", ")}`;
  return message.charAt(0).toLowerCase() + message.slice(1);
}

/** Every `BULWARK_<SECTION>_<KEY>` variable a config key answers to. */
const KNOWN_VARIABLES = Object.entries(ConfigSchema.properties).flatMap(([section, sectionSchema]) =>
  Object.keys((sectionSchema as TObject).properties).map((key) => `BULWARK_${section}_${key}`.toUpperCase()),
);

/**
 * A `BULWARK_` variable that names no key is a typo (BULWARK_SERVER_PROT) that would otherwise be
 * ignored without a word; it is refused like an unknown TOML key. BULWARK_ADMIN_* are left alone:
 * they seed the first admin and may grow.
 */
function refuseUnknownVariables(env: Record<string, string | undefined>): void {
  for (const variable of Object.keys(env)) {
    if (!variable.startsWith("BULWARK_") || variable.startsWith("BULWARK_ADMIN_")) continue;
    if (KNOWN_VARIABLES.includes(variable)) continue;
    const nearest = nearestName(variable, KNOWN_VARIABLES);
    const hint = nearest ? ` (did you mean ${nearest}?)` : "";
    throw new ConfigError(`unknown environment variable ${variable}: no config key has that name${hint}`);
  }
}

/**
 * The public URL: `server.base_url` when set, else the address the server really listens on (with the
 * port picked for port 0); a wildcard listen address is reached through loopback on this machine.
 */
export function effectiveBaseUrl(config: Readonly<Config>, port: number): string {
  if (config.server.base_url !== "") return config.server.base_url.replace(/\/$/, "");
  const host = config.server.host;
  const scheme = config.server.tls_cert === "" ? "http" : "https";
  // Loopback and wildcard listeners are reached as localhost: a name, because passkeys (WebAuthn) refuse
  // an IP address as the relying party, and browsers treat http://localhost as a secure context.
  if (LOOPBACK_OR_WILDCARD.test(host)) return `${scheme}://localhost:${port}`;
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** This server's name among replicas: server.replica_name, or `<host name>:<port it listens on>`. */
export function effectiveReplicaName(config: Readonly<Config>, port: number): string {
  return config.server.replica_name !== "" ? config.server.replica_name : `${hostname()}:${port}`;
}

/** The replica name `serve` settled (effectiveReplicaName); in-process, where nothing listens, the configured port's. */
export function replicaName(config: Readonly<Config>): string {
  return effectiveReplicaName(config, config.server.port);
}

const LOOPBACK_OR_WILDCARD = /^(127(\.\d{1,3}){3}|::1|0\.0\.0\.0|::|localhost)$/;

/** Why `endpoint` is not host:port with a port 1-65535 (an IPv6 address in brackets), or undefined. */
function describeEndpointProblem(endpoint: string): string | undefined {
  const match = /^(\[[^\]]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(endpoint);
  if (!match) return "expected host:port, with an IPv6 address in brackets as in [2001:db8::1]:51820";
  const [, host = "", portText = ""] = match;
  const port = Number(portText);
  if (port < 1 || port > 65535) return "the port must be 1-65535";
  if (host.startsWith("["))
    return isIP(host.slice(1, -1)) === 6 ? undefined : "the bracketed host is not an IPv6 address";
  if (/^[\d.]+$/.test(host)) return isIP(host) === 4 ? undefined : "not an IPv4 address";
  return HOST_NAME.test(host) ? undefined : "not a host name";
}

function fillSections(raw: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  for (const section of Object.keys(ConfigSchema.properties)) raw[section] ??= {};
  return raw;
}

function parseEnvValue(variable: string, key: string, text: string, schema: TSchema): unknown {
  const type = schema.type as string | undefined;
  if (type === "integer" || type === "number") {
    if (!/^-?\d+$/.test(text.trim()))
      throw new ConfigError(`invalid config ${key} (${variable}): must be an integer, got "${text}"`);
    return Number(text.trim());
  }
  if (type === "boolean") {
    const normalized = text.trim();
    if (normalized === "true" || normalized === "1") return true;
    if (normalized === "false" || normalized === "0") return false;
    throw new ConfigError(`invalid config ${key} (${variable}): must be true, false, 1 or 0, got "${text}"`);
  }
  if (type === "array") {
    const items = text.trim() === "" ? [] : text.split(",").map((item) => item.trim());
    if (items.includes(""))
      throw new ConfigError(
        `invalid config ${key} (${variable}): an empty item in "${text}" (lists are comma-separated)`,
      );
    const itemType = (schema.items as TSchema | undefined)?.type;
    if (itemType === "integer") {
      for (const item of items) {
        if (!/^-?\d+$/.test(item))
          throw new ConfigError(`invalid config ${key} (${variable}): "${item}" is not an integer`);
      }
      return items.map(Number);
    }
    return items;
  }
  if (type === "object") {
    // A map as name=value pairs: BULWARK_DEVICES_MIN_OS_VERSIONS="ubuntu=22.04,windows=10".
    const entries = text.split(",").map((item) => item.trim().split("="));
    const pairs = entries.filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== "");
    if (pairs.length !== entries.length)
      throw new ConfigError(
        `invalid config ${key} (${variable}): expected name=value pairs separated by commas (ubuntu=22.04,windows=10), got "${text}"`,
      );
    return Object.fromEntries(pairs.map(([name, value]) => [name.trim(), value.trim()]));
  }
  const variants = schema.anyOf as TSchema[] | undefined;
  if (
    variants?.every((variant) => "const" in variant) &&
    !variants.some((variant) => variant.const === text)
  ) {
    const allowed = variants.map((variant) => String(variant.const)).join(", ");
    throw new ConfigError(`invalid config ${key} (${variable}): must be one of ${allowed}, got "${text}"`);
  }
  return text;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
