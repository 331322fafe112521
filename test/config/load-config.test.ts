import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { parse } from "smol-toml";
import { ConfigSchema } from "../../src/config/config-schema";
import { ConfigError, loadConfig } from "../../src/config/load-config";

const folder = mkdtempSync(join(tmpdir(), "bulwark-config-"));

function writeToml(text: string): string {
  const path = join(folder, `${crypto.randomUUID()}.toml`);
  writeFileSync(path, text);
  return path;
}

describe("loadConfig", () => {
  test("defaults are the documented ones", () => {
    const config = loadConfig({ env: {}, cwd: folder });
    expect(config.server).toEqual({
      host: "127.0.0.1",
      port: 8080,
      base_url: "",
      trust_proxy: false,
      trusted_proxies: [],
      tls_cert: "",
      tls_key: "",
      cors_origins: [],
      replica_name: "",
    });
    expect(config.log).toEqual({ format: "auto", level: "info" });
    expect(config.metrics).toEqual({ enabled: false, token: "" });
    expect(config.database).toEqual({
      path: "./data/bulwark.db",
      synchronous: "full",
      key_file: "",
      url: "",
      password_file: "",
      timeout_seconds: 5,
      pool_size: 10,
    });
    expect(config.auth.access_token_ttl_seconds).toBe(86400);
    expect(config.auth.login_max_failures).toBe(5);
    expect(config.rate_limit).toEqual({
      authenticated_per_minute: 1000,
      unauthenticated_per_minute: 100,
      enterprise_per_minute: 10000,
      enrollments_per_minute: 1000,
    });
    expect(config.webhooks.retry_schedule_seconds).toEqual([10, 60, 300, 1800, 7200, 21600, 43200, 86400]);
    expect(config.vpn).toEqual({
      endpoint: "vpn.example.com:51820",
      address_pool: "10.100.0.0/16",
      organization_prefix_length: 20,
      server_public_key: "",
      allowed_ips: [],
      dns: [],
      persistent_keepalive: 25,
    });
  });

  test("config.example.toml documents every key with its default", () => {
    const example = parse(readFileSync(join(import.meta.dir, "../../config.example.toml"), "utf8"));
    const defaults = Value.Default(
      ConfigSchema,
      Object.fromEntries(Object.keys(ConfigSchema.properties).map((key) => [key, {}])),
    );
    expect(example as unknown).toEqual(defaults);
  });

  test("a TOML file overrides defaults, and BULWARK_<SECTION>_<KEY> overrides the file", () => {
    const file = writeToml(
      '[server]\nport = 9100\nhost = "0.0.0.0"\n[webhooks]\nretry_schedule_seconds = [1, 2]\n',
    );
    const config = loadConfig({
      file,
      env: { BULWARK_SERVER_PORT: "9200", BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" },
    });
    expect(config.server.port).toBe(9200);
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.webhooks.retry_schedule_seconds).toEqual([1, 2]);
    expect(config.webhooks.allow_private_targets).toBe(true);
  });

  test("list values in the environment are comma-separated", () => {
    const config = loadConfig({ env: { BULWARK_WEBHOOKS_RETRY_SCHEDULE_SECONDS: "5, 15,45" }, cwd: folder });
    expect(config.webhooks.retry_schedule_seconds).toEqual([5, 15, 45]);
  });

  test("./bulwark.toml is read when no --config is given", () => {
    const cwd = mkdtempSync(join(tmpdir(), "bulwark-cwd-"));
    writeFileSync(join(cwd, "bulwark.toml"), "[jobs]\nscan_interval_seconds = 7\n");
    expect(loadConfig({ env: {}, cwd }).jobs.scan_interval_seconds).toBe(7);
  });

  test.each([
    [{ BULWARK_SERVER_PORT: "eighty" }, "server.port"],
    [{ BULWARK_SERVER_PORT: "70000" }, "server.port"],
    [{ BULWARK_DATABASE_SYNCHRONOUS: "off" }, "database.synchronous"],
    [{ BULWARK_SERVER_TRUST_PROXY: "maybe" }, "server.trust_proxy"],
    [{ BULWARK_WEBHOOKS_RETRY_SCHEDULE_SECONDS: "10,soon" }, "webhooks.retry_schedule_seconds"],
    [{ BULWARK_VPN_ADDRESS_POOL: "not-a-cidr" }, "vpn.address_pool"],
    [{ BULWARK_VPN_ADDRESS_POOL: "10.100.0.1/16" }, "vpn.address_pool"],
    [{ BULWARK_VPN_ADDRESS_POOL: "10.100.0.0/31" }, "vpn.address_pool"],
    [{ BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "31" }, "vpn.organization_prefix_length"],
    [{ BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "12" }, "vpn.organization_prefix_length"],
    [
      { BULWARK_VPN_ADDRESS_POOL: "10.8.0.0/24", BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "20" },
      "vpn.organization_prefix_length",
    ],
  ])("invalid value %p fails naming %s", (env, key) => {
    expect(() => loadConfig({ env, cwd: folder })).toThrow(ConfigError);
    expect(() => loadConfig({ env, cwd: folder })).toThrow(key);
  });

  test("organizations' subnets: /20 by default, the whole pool when the pool is smaller and the key unset", () => {
    expect(loadConfig({ env: {}, cwd: folder }).vpn.organization_prefix_length).toBe(20);
    const small = loadConfig({ env: { BULWARK_VPN_ADDRESS_POOL: "10.8.0.0/24" }, cwd: folder });
    expect(small.vpn.organization_prefix_length).toBe(24);
    const set = { BULWARK_VPN_ADDRESS_POOL: "10.8.0.0/24", BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "26" };
    expect(loadConfig({ env: set, cwd: folder }).vpn.organization_prefix_length).toBe(26);
  });

  test("unknown keys and sections in the file are refused by name", () => {
    expect(() => loadConfig({ file: writeToml("[server]\nprot = 1\n"), env: {} })).toThrow("server.prot");
    expect(() => loadConfig({ file: writeToml("[serverx]\nport = 1\n"), env: {} })).toThrow("[serverx]");
  });

  test("a missing --config file and invalid TOML are clear errors", () => {
    expect(() => loadConfig({ file: join(folder, "missing.toml"), env: {} })).toThrow("does not exist");
    expect(() => loadConfig({ file: writeToml("[server\nport="), env: {} })).toThrow("not valid TOML");
  });

  test("the loaded config is frozen", () => {
    const config = loadConfig({ env: {}, cwd: folder });
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow();
  });
});

describe("values a running server would trip over later are refused at start", () => {
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig({ env });
      return "";
    } catch (error) {
      return (error as Error).message;
    }
  };

  test("durations and counts have upper bounds, so that no date overflows and no job fails", () => {
    expect(refused({ BULWARK_AUTH_REFRESH_TOKEN_TTL_SECONDS: "100000000000000" })).toContain(
      "auth.refresh_token_ttl_seconds",
    );
    expect(refused({ BULWARK_AUTH_LOGIN_LOCKOUT_SECONDS: "99999999999999999" })).toContain(
      "auth.login_lockout_seconds",
    );
    expect(refused({ BULWARK_DEVICES_OFFLINE_AFTER_SECONDS: "100000000000000000" })).toContain(
      "devices.offline_after_seconds",
    );
    expect(refused({ BULWARK_WEBHOOKS_RETENTION_DAYS: "100000000000000000" })).toContain(
      "webhooks.retention_days",
    );
  });

  test("vpn.endpoint is host:port with a port 1-65535, an IPv6 address in brackets", () => {
    for (const endpoint of ["vpn.corp.example:51820", "[2001:db8::1]:51820", "203.0.113.7:443"])
      expect({ endpoint, problem: refused({ BULWARK_VPN_ENDPOINT: endpoint }) }).toEqual({
        endpoint,
        problem: "",
      });
    for (const endpoint of [
      "vpn.corp.example:99999",
      "h:0",
      "2001:db8::1:51820",
      "[not-v6]:51820",
      "999.1.1.1:1",
      "vpn",
    ])
      expect(refused({ BULWARK_VPN_ENDPOINT: endpoint })).toContain("invalid config vpn.endpoint");
  });

  test("the WireGuard settings are checked: server key, networks, DNS", () => {
    const key = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=";
    expect(
      refused({
        BULWARK_VPN_SERVER_PUBLIC_KEY: key,
        BULWARK_VPN_ALLOWED_IPS: "10.0.0.0/8,2001:db8::/32,0.0.0.0/0",
        BULWARK_VPN_DNS: "10.100.0.1,2001:db8::53,corp.example",
      }),
    ).toBe("");
    expect(refused({ BULWARK_VPN_SERVER_PUBLIC_KEY: "not-a-key" })).toContain("vpn.server_public_key");
    expect(refused({ BULWARK_VPN_SERVER_PUBLIC_KEY: key.slice(1) })).toContain("vpn.server_public_key");
    for (const network of ["10.0.0.0", "10.0.0.0/33", "2001:db8::/129", "corp/8"])
      expect(refused({ BULWARK_VPN_ALLOWED_IPS: network })).toContain("vpn.allowed_ips");
    expect(refused({ BULWARK_VPN_DNS: "not a server" })).toContain("vpn.dns");
    expect(refused({ BULWARK_VPN_PERSISTENT_KEEPALIVE: "70000" })).toContain("vpn.persistent_keepalive");
  });

  test("devices.min_os_versions: a table in the file, name=value pairs in the environment, each checked", () => {
    const file = writeToml('[devices]\nmin_os_versions = { ubuntu = "22.04", windows = "10.0.19045" }\n');
    expect(loadConfig({ file, env: {} }).devices.min_os_versions).toEqual({
      ubuntu: "22.04",
      windows: "10.0.19045",
    });
    expect(
      loadConfig({ env: { BULWARK_DEVICES_MIN_OS_VERSIONS: "ubuntu=22.04, debian=12" }, cwd: folder }).devices
        .min_os_versions,
    ).toEqual({ ubuntu: "22.04", debian: "12" });
    const numeric = writeToml("[devices]\nmin_os_versions = { ubuntu = 22.10 }\n");
    expect(() => loadConfig({ file: numeric, env: {} })).toThrow(
      'invalid config devices.min_os_versions.ubuntu: write the version as a string ("22.1")',
    );
    for (const [value, expected] of [
      ["ubuntu", "expected name=value pairs"],
      ["linux=6.1", "devices.min_os_versions.linux: Linux is judged per distribution"],
      ["Ubuntu=22.04", 'devices.min_os_versions: "Ubuntu" is not a platform'],
      ["ubuntu=jammy", 'devices.min_os_versions.ubuntu: "jammy" is not a version such as 22.04 or 12'],
    ])
      expect(refused({ BULWARK_DEVICES_MIN_OS_VERSIONS: value as string })).toContain(expected as string);
    for (const message of ["ubuntu", "linux=6.1", "ubuntu=jammy"].map((value) =>
      refused({ BULWARK_DEVICES_MIN_OS_VERSIONS: value }),
    ))
      expect(message).not.toContain("\n");
  });

  test("server.trusted_proxies are IPv4 and IPv6 addresses and networks, and need server.trust_proxy", () => {
    const proxies = "10.0.0.5, 10.1.0.0/16,2001:db8::7,2001:db8:1::/48,::ffff:192.0.2.0/120";
    const config = loadConfig({
      env: { BULWARK_SERVER_TRUST_PROXY: "true", BULWARK_SERVER_TRUSTED_PROXIES: proxies },
      cwd: folder,
    });
    expect(config.server.trusted_proxies).toEqual([
      "10.0.0.5",
      "10.1.0.0/16",
      "2001:db8::7",
      "2001:db8:1::/48",
      "::ffff:192.0.2.0/120",
    ]);
    const file = writeToml('[server]\ntrust_proxy = true\ntrusted_proxies = ["192.0.2.10", "fd00::/8"]\n');
    expect(loadConfig({ file, env: {} }).server.trusted_proxies).toEqual(["192.0.2.10", "fd00::/8"]);
    for (const entry of [
      "proxy.corp.example",
      "10.0.0.0/33",
      "10.0.0.1/8",
      "2001:db8::/129",
      "fe80::1%eth0",
      "[::1]",
      "10.0.0.5:8080",
      "10.0.0.0/08",
    ])
      expect(
        refused({ BULWARK_SERVER_TRUST_PROXY: "true", BULWARK_SERVER_TRUSTED_PROXIES: `127.0.0.1,${entry}` }),
      ).toBe(
        `invalid config server.trusted_proxies: "${entry}" is not an IP address or a network such as 10.0.0.0/8 or 2001:db8::/32 (no bits set beyond the prefix)`,
      );
    expect(refused({ BULWARK_SERVER_TRUSTED_PROXIES: "10.0.0.5" })).toContain(
      "server.trusted_proxies: it takes effect only with server.trust_proxy = true",
    );
  });

  test("server.tls_cert and server.tls_key go together", () => {
    expect(refused({ BULWARK_SERVER_TLS_CERT: "/etc/bulwark/cert.pem" })).toContain("server.tls_key");
    expect(refused({ BULWARK_SERVER_TLS_KEY: "/etc/bulwark/key.pem" })).toContain("server.tls_cert");
  });

  test("auth.webauthn_origins are origins: scheme, host and port, nothing more", () => {
    expect(
      refused({ BULWARK_AUTH_WEBAUTHN_ORIGINS: "https://console.example.com,http://localhost:3000" }),
    ).toBe("");
    for (const origin of ["console.example.com", "https://console.example.com/login", "ftp://example.com"])
      expect(refused({ BULWARK_AUTH_WEBAUTHN_ORIGINS: origin })).toContain(
        "invalid config auth.webauthn_origins",
      );
  });

  test("an empty variable is unset: it does not clear what the file sets (docker compose's ${VAR})", () => {
    const file = writeToml('[metrics]\nenabled = true\ntoken = "from-the-file-0123456789"\n');
    const config = loadConfig({ file, env: { BULWARK_METRICS_TOKEN: "", BULWARK_LOG_LEVEL: "" } });
    expect(config.metrics.token).toBe("from-the-file-0123456789");
    expect(config.log.level).toBe("info");
    expect(refused({ BULWARK_METRICS_TOKEN: "0123456789 abcdefghij" })).toContain("no spaces");
  });

  test("booleans are true, false, 1 or 0; lists have no empty items; base_url has no query", () => {
    expect(refused({ BULWARK_SERVER_TRUST_PROXY: "TRUE" })).toContain("must be true, false, 1 or 0");
    expect(refused({ BULWARK_WEBHOOKS_RETRY_SCHEDULE_SECONDS: "10,,20" })).toContain("an empty item");
    expect(refused({ BULWARK_SERVER_BASE_URL: "https://bulwark.example.com/?x=1" })).toContain(
      "server.base_url",
    );
  });
});
