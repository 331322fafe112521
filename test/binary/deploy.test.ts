/**
 * The files in deploy/, checked by the tools that will read them, against the executable:
 * - bulwark.service: `systemd-analyze verify` (no error, no warning), the hardening docs/production.md
 *   promises, and `systemd-analyze security --offline` keeping its exposure low. verify needs the
 *   ExecStart program to exist, so it reads a copy whose only change is ExecStart naming the executable
 *   under test instead of /usr/local/bin/bulwark. bulwark.service.d/postgresql.conf: the same, with the
 *   drop-in beside the unit, and that it adds nothing but its ordering and retries.
 * - compose.postgres.yml (Compose cannot run here): Bulwark's environment, with the secret and the
 *   volume where Compose mounts them and a role signing in with the secret's password, starts the
 *   executable on a PostgreSQL database of the test cluster; the services agree on the secret, role
 *   and database.
 * - nginx.conf: `nginx -t`, then a real nginx in front of the executable: TLS, the device certificate
 *   forwarded in Client-Cert, the client's own Client-Cert and X-Forwarded-For replaced, oversized
 *   requests left for Bulwark to refuse with its JSON error body.
 * - Dockerfile (Docker cannot run here): its build stage copies every file outside src/ that the
 *   sources import (and its .dockerignore lets exactly those through), its ENV is a configuration the
 *   executable accepts, and its HEALTHCHECK command, run by bash as Docker would, tells a healthy
 *   server from a missing one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { SQL } from "bun";
import { isInNetworks, parseIpAddress, parseIpNetwork } from "../../src/lib/ip-networks";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { freePort, sharedPgCluster } from "../helpers/pg-cluster";
import { enrollWithCertificate, forgeCertificate, selfSignedCertificate } from "../helpers/pki";
import { type HaproxyOptions, type RunningProxy, startHaproxy } from "../helpers/replicas";

const ROOT = resolve(import.meta.dir, "../..");
const DEPLOY = join(ROOT, "deploy");
const folder = mkdtempSync(join(tmpdir(), "bulwark-deploy-"));
let binary: string;

beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}) {
  const result = Bun.spawnSync(args, {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  return { exitCode: result.exitCode, output: `${result.stdout}${result.stderr}`.trim() };
}

function file(name: string, text: string): string {
  const path = join(folder, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe("deploy/bulwark-agent.service", () => {
  const unitText = readFileSync(join(DEPLOY, "bulwark-agent.service"), "utf8");

  test("systemd-analyze verify: no error and no warning; it restarts always, keeps its state 0700 and creates files 0600", () => {
    const line = "ExecStart=/usr/local/bin/bulwark agent run";
    expect(unitText.split("\n").filter((candidate) => candidate === line)).toHaveLength(1);
    const path = file(
      "systemd/bulwark-agent.service",
      unitText.replace(line, `ExecStart=${resolve(binary)} agent run`),
    );
    const result = run(["systemd-analyze", "verify", path]);
    expect(result.output).toBe("");
    expect(result.exitCode).toBe(0);
    for (const directive of [
      "Restart=always",
      "StateDirectory=bulwark-agent",
      "StateDirectoryMode=0700",
      "UMask=0077",
      "StartLimitIntervalSec=0",
    ])
      expect(unitText.split("\n")).toContain(directive);
  });
});

describe("deploy/bulwark.service", () => {
  const unitText = readFileSync(join(DEPLOY, "bulwark.service"), "utf8");

  /** Every `Key=value` of the unit, comments left out; a key may repeat (SystemCallFilter). */
  function directives(): Map<string, string[]> {
    const map = new Map<string, string[]>();
    for (const line of unitText.split("\n")) {
      const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
      if (match?.[1] !== undefined) map.set(match[1], [...(map.get(match[1]) ?? []), match[2] ?? ""]);
    }
    return map;
  }

  /** The unit as shipped, but starting the executable under test: the one line verify cannot take as is. */
  function unitForExecutable(): string {
    const line = "ExecStart=/usr/local/bin/bulwark serve --config /etc/bulwark/bulwark.toml";
    expect(unitText.split("\n").filter((candidate) => candidate === line)).toHaveLength(1);
    return file(
      "systemd/bulwark.service",
      unitText.replace(line, `ExecStart=${resolve(binary)} serve --config /etc/bulwark/bulwark.toml`),
    );
  }

  test("systemd-analyze verify: no error and no warning", () => {
    const result = run(["systemd-analyze", "verify", unitForExecutable()]);
    expect(result.output).toBe("");
    expect(result.exitCode).toBe(0);
  });

  test("the hardening docs/production.md promises is there", () => {
    const unit = directives();
    const expected: Record<string, string> = {
      Type: "exec",
      User: "bulwark",
      Group: "bulwark",
      StateDirectory: "bulwark",
      StateDirectoryMode: "0700",
      ConfigurationDirectory: "bulwark",
      WorkingDirectory: "/var/lib/bulwark",
      UMask: "0077",
      Restart: "on-failure",
      RestartSec: "5s",
      LimitNOFILE: "65536",
      LimitCORE: "0",
      CapabilityBoundingSet: "",
      AmbientCapabilities: "",
      NoNewPrivileges: "yes",
      PrivateUsers: "yes",
      RestrictSUIDSGID: "yes",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      PrivateDevices: "yes",
      PrivateMounts: "yes",
      RemoveIPC: "yes",
      ProtectKernelTunables: "yes",
      ProtectKernelModules: "yes",
      ProtectKernelLogs: "yes",
      ProtectControlGroups: "yes",
      ProtectClock: "yes",
      ProtectHostname: "yes",
      ProtectProc: "invisible",
      ProcSubset: "pid",
      RestrictAddressFamilies: "AF_INET AF_INET6 AF_UNIX",
      RestrictNamespaces: "yes",
      RestrictRealtime: "yes",
      LockPersonality: "yes",
      SystemCallErrorNumber: "EPERM",
      SystemCallArchitectures: "native",
    };
    for (const [key, value] of Object.entries(expected)) expect([key, unit.get(key)]).toEqual([key, [value]]);
    expect(unit.get("SystemCallFilter")).toEqual(["@system-service", "~@privileged @resources"]);
    expect(unit.get("ExecStart")).toEqual([
      "/usr/local/bin/bulwark serve --config /etc/bulwark/bulwark.toml",
    ]);
    // JavaScriptCore's JIT needs memory both writable and executable (docs/production.md measures it).
    expect(unit.has("MemoryDenyWriteExecute")).toBe(false);
  });

  test("systemd-analyze security --offline: exposure below 2 (OK)", () => {
    const result = run(["systemd-analyze", "security", "--offline=yes", "--no-pager", unitForExecutable()]);
    expect(result.exitCode).toBe(0);
    const exposure = /Overall exposure level for bulwark\.service: ([0-9.]+)/.exec(result.output)?.[1];
    expect(Number(exposure)).toBeLessThan(2);
  });

  test("with the PostgreSQL drop-in (bulwark.service.d/postgresql.conf): verify reads it and passes, it only orders and retries, the exposure stays below 2", () => {
    const dropInText = readFileSync(join(DEPLOY, "bulwark.service.d", "postgresql.conf"), "utf8");
    const settings = dropInText.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    // The sandbox of the unit stays whole: the drop-in holds no other directive.
    expect(settings).toEqual([
      "[Unit]",
      "After=postgresql.service",
      "StartLimitIntervalSec=0",
      "[Service]",
      "RestartSec=10s",
    ]);
    const unit = file("systemd-postgresql/bulwark.service", readFileSync(unitForExecutable(), "utf8"));
    const dropIn = join(dirname(unit), "bulwark.service.d", "postgresql.conf");
    // verify reads a drop-in folder beside the unit it is given: a key it does not know is named.
    file(relative(folder, dropIn), `${dropInText}Unknowable=yes\n`);
    expect(run(["systemd-analyze", "verify", unit]).output).toContain("postgresql.conf:");
    file(relative(folder, dropIn), dropInText);
    const verify = run(["systemd-analyze", "verify", unit]);
    expect(verify.output).toBe("");
    expect(verify.exitCode).toBe(0);
    const security = run(["systemd-analyze", "security", "--offline=yes", "--no-pager", unit]);
    const exposure = /Overall exposure level for bulwark\.service: ([0-9.]+)/.exec(security.output)?.[1];
    expect(Number(exposure)).toBeLessThan(2);
  });
});

describe("deploy/Dockerfile", () => {
  const dockerfile = readFileSync(join(DEPLOY, "Dockerfile"), "utf8").replace(/\\\n\s*/g, "");
  const lines = dockerfile.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));

  test("the build stage copies every file outside src/ that the sources import", () => {
    const buildStage = lines.slice(
      0,
      lines.findIndex((line, index) => index > 0 && line.startsWith("FROM ")),
    );
    const copied = buildStage
      .filter((line) => line.startsWith("COPY "))
      .flatMap((line) => line.split(/\s+/).slice(1, -1))
      .map((path) => path.replace(/\/$/, ""));
    const needed = new Set(["package.json", "package-lock.json", "src", "scripts"]);
    const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((name) =>
      name.endsWith(".ts"),
    );
    for (const source of sources) {
      const text = readFileSync(join(ROOT, "src", source), "utf8");
      for (const [, specifier] of text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
        needed.add(relative(ROOT, resolve(ROOT, "src", dirname(source), specifier ?? "")));
      }
    }
    // A file is copied when it, or a folder holding it, is.
    const isCopied = (path: string) => copied.some((copy) => path === copy || path.startsWith(`${copy}/`));
    expect([...needed].filter((path) => !isCopied(path))).toEqual([]);
    // The context BuildKit sends holds exactly what the build stage copies.
    const ignore = readFileSync(join(DEPLOY, "Dockerfile.dockerignore"), "utf8");
    const included = [...ignore.matchAll(/^!(.+)$/gm)].map((match) => match[1]);
    expect(included.sort()).toEqual([...copied].sort());
  });

  test("its ENV is a configuration the executable accepts, and the user is not root", () => {
    const env = Object.fromEntries(
      [...dockerfile.matchAll(/^ENV (.+)$/gm)].flatMap((match) =>
        (match[1] ?? "")
          .trim()
          .split(/\s+/)
          .map((pair) => pair.split("=") as [string, string]),
      ),
    );
    expect(env).toEqual({
      BULWARK_SERVER_HOST: "0.0.0.0",
      BULWARK_DATABASE_PATH: "/var/lib/bulwark/bulwark.db",
    });
    const check = run([binary, "config", "check"], env);
    expect(check.output).toContain('host = "0.0.0.0"  # env BULWARK_SERVER_HOST');
    expect(check.exitCode).toBe(0);
    expect(lines).toContain("USER 10001:10001");
    expect(lines).toContain('VOLUME ["/var/lib/bulwark"]');
    expect(lines).toContain("EXPOSE 8080");
    expect(lines).toContain('ENTRYPOINT ["/usr/local/bin/bulwark"]');
  });

  test("the HEALTHCHECK command passes against a running server and fails without one", async () => {
    const healthcheck = /^HEALTHCHECK .*? CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    const command = JSON.parse(healthcheck ?? "null") as string[];
    expect(command[0]).toBe("bash");
    const data = join(folder, "docker-data");
    mkdirSync(data);
    const server = await startServer(binary, data, { BULWARK_SERVER_HOST: "0.0.0.0" });
    try {
      const port = new URL(server.url).port;
      expect(run(command, { BULWARK_SERVER_PORT: port }).exitCode).toBe(0);
    } finally {
      await server.stop();
    }
    const port = new URL(server.url).port;
    expect(run(command, { BULWARK_SERVER_PORT: port }).exitCode).not.toBe(0);
  }, 30_000);
});

describe("deploy/compose.postgres.yml", () => {
  type Service = { environment: Record<string, string>; secrets: string[]; volumes: string[] };
  const compose = Bun.YAML.parse(readFileSync(join(DEPLOY, "compose.postgres.yml"), "utf8")) as {
    services: {
      bulwark: Service & {
        build: { context: string; dockerfile: string };
        depends_on: Record<string, { condition: string }>;
      };
      postgres: Service & { healthcheck: { test: string[] } };
    };
    secrets: Record<string, { file: string }>;
  };
  const { bulwark, postgres } = compose.services;

  test("Bulwark's environment, with the secret, the key file's volume and the database where Compose puts them, starts the executable on PostgreSQL", async () => {
    // Both read the one password file, as Compose mounts a secret: /run/secrets/<name>.
    expect(compose.secrets).toEqual({ "db-password": { file: "./secrets/db-password" } });
    expect(bulwark.secrets).toEqual(["db-password"]);
    expect(postgres.secrets).toEqual(["db-password"]);
    expect(postgres.environment.POSTGRES_PASSWORD_FILE).toBe("/run/secrets/db-password");
    expect(bulwark.environment.BULWARK_DATABASE_PASSWORD_FILE).toBe("/run/secrets/db-password");
    // The image is built from this repository's Dockerfile, the context being its root.
    expect(resolve(DEPLOY, bulwark.build.context, bulwark.build.dockerfile)).toBe(join(DEPLOY, "Dockerfile"));
    // The key file outlives the container: it is in the volume at the image's state folder.
    expect(bulwark.volumes).toEqual(["bulwark-data:/var/lib/bulwark"]);
    expect(dirname(bulwark.environment.BULWARK_DATABASE_KEY_FILE ?? "")).toBe("/var/lib/bulwark");
    // The URL names the role and database the postgres image creates, at the service's name.
    const url = new URL(bulwark.environment.BULWARK_DATABASE_URL ?? "");
    expect([url.protocol, url.hostname, url.port, url.username, url.password, url.pathname]).toEqual([
      "postgresql:",
      "postgres",
      "5432",
      postgres.environment.POSTGRES_USER ?? "",
      "",
      `/${postgres.environment.POSTGRES_DB}`,
    ]);

    // That role, signing in with the password file's password, owning an empty database on the test
    // cluster, stands for what the postgres image sets up on a new volume.
    const cluster = await sharedPgCluster();
    const role = url.username;
    const password = randomBytes(24).toString("hex");
    const database = `compose_${process.pid}`;
    const admin = new SQL(cluster.url, { max: 1 });
    try {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${database}`);
      await admin.unsafe(
        `DO $$ BEGIN CREATE ROLE ${role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
      );
      await admin.unsafe(`ALTER ROLE ${role} PASSWORD '${password}'`);
      await admin.unsafe(`CREATE DATABASE ${database} OWNER ${role}`);
      const hba = join(cluster.folder, "data", "pg_hba.conf");
      writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
      await admin`SELECT pg_reload_conf()`;
    } finally {
      await admin.close();
    }
    const secrets = join(folder, "compose", "run-secrets");
    const state = join(folder, "compose", "var-lib-bulwark");
    mkdirSync(secrets, { recursive: true });
    mkdirSync(state, { recursive: true });
    writeFileSync(join(secrets, "db-password"), `${password}\n`);
    // Compose replaces `${VAR:-}` of an unset variable with nothing, which Bulwark takes as unset.
    const env = Object.fromEntries(
      Object.entries(bulwark.environment).map(([name, value]) => [
        name,
        value
          .replace(/^\$\{[A-Z_]+:-\}$/, "")
          .replace(/^\/run\/secrets\//, `${secrets}/`)
          .replace(/^\/var\/lib\/bulwark\//, `${state}/`),
      ]),
    );
    url.host = `127.0.0.1:${cluster.port}`;
    url.pathname = `/${database}`;
    env.BULWARK_DATABASE_URL = url.href;
    const server = await startServer(binary, state, env);
    try {
      const health = await call(server, "GET", "/api/v1/health");
      expect([health.status, health.store]).toEqual(["ok", "postgresql"]);
      expect(statSync(env.BULWARK_DATABASE_KEY_FILE ?? "").mode & 0o777).toBe(0o600);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // The password is the file's: another one is refused at the start.
    writeFileSync(join(secrets, "db-password"), "not-the-password\n");
    const refused = run([binary, "migrate"], env);
    expect(refused.output).toContain(`password authentication failed for user "${role}"`);
    expect(refused.exitCode).toBe(1);
  }, 60_000);

  test("the postgres service's health check is pg_isready over TCP, as Bulwark connects, and Bulwark waits for it", () => {
    expect(postgres.healthcheck.test).toEqual([
      "CMD",
      "pg_isready",
      "--host=127.0.0.1",
      `--username=${postgres.environment.POSTGRES_USER}`,
      `--dbname=${postgres.environment.POSTGRES_DB}`,
    ]);
    expect(bulwark.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
  });
});

describe("deploy/compose.replicas.yml", () => {
  type Service = {
    environment: Record<string, string>;
    volumes?: string[];
    networks?: string[] | Record<string, { ipv4_address?: string } | null>;
  };
  const compose = Bun.YAML.parse(readFileSync(join(DEPLOY, "compose.replicas.yml"), "utf8")) as {
    services: Record<string, Service>;
    networks: { bulwark: { ipam: { config: { subnet: string; ip_range?: string }[] } } };
  };
  /** Whether the IPv4 or IPv6 address lies in the network (CIDR notation). */
  const isInCidr = (address: string, cidr: string) => {
    const parsedAddress = parseIpAddress(address);
    const network = parseIpNetwork(cidr);
    if (!parsedAddress || !network) throw new Error(`not an address in a network: ${address} in ${cidr}`);
    return isInNetworks(parsedAddress, [network]);
  };
  /** A value as Compose gives it when the variable is unset: `${NAME:-default}` is `default`. */
  const unset = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1");
  const replicas = ["bulwark-1", "bulwark-2"].map((name) => compose.services[name] as Service);

  test("both replicas share the database, the key file's volume and the public URL, have names of their own, and trust only HAProxy's address", () => {
    const [first, second] = replicas.map((service) =>
      Object.fromEntries(Object.entries(service.environment).map(([key, value]) => [key, unset(value)])),
    ) as [Record<string, string>, Record<string, string>];
    for (const key of [
      "BULWARK_DATABASE_URL",
      "BULWARK_DATABASE_KEY_FILE",
      "BULWARK_SERVER_BASE_URL",
      "BULWARK_SERVER_TRUSTED_PROXIES",
    ])
      expect(second[key]).toBe(first[key] as string);
    expect(first.BULWARK_SERVER_BASE_URL).toBe("http://localhost:8080");
    expect([first.BULWARK_SERVER_REPLICA_NAME, second.BULWARK_SERVER_REPLICA_NAME]).toEqual([
      "bulwark-1",
      "bulwark-2",
    ]);
    expect(replicas[0]?.volumes).toEqual(replicas[1]?.volumes as string[]);
    expect(dirname(first.BULWARK_DATABASE_KEY_FILE ?? "")).toBe(
      replicas[0]?.volumes?.[0]?.split(":")[1] as string,
    );
    // Only HAProxy's fixed address (a /32), never the network: another container on it (postgres, a
    // replica, anything added later) must not be believed when it claims a client's address.
    const haproxyNetworks = compose.services.haproxy?.networks as Record<string, { ipv4_address?: string }>;
    const haproxyAddress = haproxyNetworks.bulwark?.ipv4_address as string;
    expect(haproxyAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(first.BULWARK_SERVER_TRUSTED_PROXIES).toBe(`${haproxyAddress}/32`);
    // The address is on the network, and outside the range Docker hands out to the other containers.
    const [network] = compose.networks.bulwark.ipam.config;
    expect(isInCidr(haproxyAddress, network?.subnet as string)).toBe(true);
    expect(isInCidr(haproxyAddress, network?.ip_range as string)).toBe(false);
    // The executable accepts each replica's environment as it stands (the password file aside).
    for (const env of [first, second]) {
      const check = run([binary, "config", "check"], { ...env, BULWARK_DATABASE_PASSWORD_FILE: "" });
      expect(check.output).toContain(`replica_name = "${env.BULWARK_SERVER_REPLICA_NAME}"`);
      expect(check.exitCode).toBe(0);
    }
  });

  test("HAProxy's service runs deploy/haproxy-replicas.cfg over the two replicas, and HAProxy accepts it with that environment", () => {
    const haproxy = compose.services.haproxy as Service;
    expect(haproxy.volumes).toEqual(["./haproxy-replicas.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]);
    expect([haproxy.environment.BULWARK_REPLICA_1, haproxy.environment.BULWARK_REPLICA_2]).toEqual([
      "bulwark-1:8080",
      "bulwark-2:8080",
    ]);
    // Compose resolves the service names; here they stand for loopback addresses.
    const check = Bun.spawnSync(["haproxy", "-c", "-f", join(DEPLOY, "haproxy-replicas.cfg")], {
      env: {
        PATH: `${process.env.PATH}:/usr/sbin`,
        ...haproxy.environment,
        BULWARK_REPLICA_1: "127.0.0.1:8081",
        BULWARK_REPLICA_2: "127.0.0.1:8082",
      },
    });
    expect(`${check.stdout}${check.stderr}`).toContain("Configuration file is valid");
    expect(check.exitCode).toBe(0);
  });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("deploy/haproxy-replicas.cfg in plain HTTP", () => {
  // Two servers that answer with the headers they received stand for the replicas; curl sends from
  // 127.0.0.1 (a client) or 127.0.0.2 (the load balancer before HAProxy).
  const echoes = [0, 1].map(() =>
    Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        Response.json({
          forwarded_for: request.headers.get("x-forwarded-for"),
          client_cert: request.headers.get("client-cert"),
          request_id: request.headers.get("x-request-id"),
        }),
    }),
  );
  const proxies: RunningProxy[] = [];
  afterAll(async () => {
    for (const proxy of proxies) await proxy.stop();
    for (const echo of echoes) echo.stop(true);
  });

  async function proxyWith(options: HaproxyOptions) {
    const proxy = await startHaproxy(
      await freePort(),
      echoes.map((echo) => `127.0.0.1:${echo.port}`),
      options,
    );
    proxies.push(proxy);
    // curl runs beside this process's event loop, which answers as the replicas.
    return async (from: string) => {
      const sent = Bun.spawn(
        [
          "curl",
          "-sS",
          "--interface",
          from,
          "-H",
          "X-Forwarded-For: 203.0.113.9",
          "-H",
          "Client-Cert: :Zm9yZ2Vk:",
          `${proxy.url}/api/v1/users/me`,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const [code, out, err] = await Promise.all([
        sent.exited,
        new Response(sent.stdout).text(),
        new Response(sent.stderr).text(),
      ]);
      expect(code, err).toBe(0);
      const { request_id, ...forwarded } = JSON.parse(out) as {
        forwarded_for: string;
        client_cert: string | null;
        request_id: string;
      };
      expect(request_id).toMatch(UUID);
      return forwarded;
    };
  }

  test("a client's X-Request-ID reaches the replica when Bulwark accepts it; otherwise HAProxy's UUID does", async () => {
    await proxyWith({});
    const proxy = proxies.at(-1) as RunningProxy;
    const seen = async (ids: string[]) => {
      const headers = new Headers();
      for (const id of ids) headers.append("x-request-id", id);
      const answer = (await (await fetch(`${proxy.url}/`, { headers })).json()) as { request_id: string };
      return answer.request_id;
    };
    expect(await seen(["trace.42_a-B"])).toBe("trace.42_a-B");
    for (const refused of [[], ['bad"id'], ["x".repeat(129)], ["one", "two"]])
      expect(await seen(refused)).toMatch(UUID);
  });

  test("HAProxy's own 503 is Bulwark's error body, with the request id in it and in X-Request-ID", async () => {
    // Nothing listens on these ports: every replica refuses the connection.
    const proxy = await startHaproxy(await freePort(), [
      `127.0.0.1:${await freePort()}`,
      `127.0.0.1:${await freePort()}`,
    ]);
    proxies.push(proxy);
    for (const sent of ["trace-503", undefined]) {
      const response = await fetch(`${proxy.url}/api/v1/users/me`, {
        headers: sent ? { "x-request-id": sent } : {},
      });
      expect(response.status).toBe(503);
      const id = response.headers.get("x-request-id") as string;
      expect(id).toMatch(sent ?? UUID);
      expect(await response.json()).toMatchObject({
        code: 503,
        reason: "no_replica_available",
        request_id: id,
      });
    }
  });

  test("as shipped, a client's X-Forwarded-For and Client-Cert are removed", async () => {
    const send = await proxyWith({});
    for (const from of ["127.0.0.1", "127.0.0.2"])
      expect(await send(from)).toEqual({ forwarded_for: from, client_cert: null });
  });

  test("BULWARK_TRUSTED_UPSTREAM passes on that address's X-Forwarded-For only, and no Client-Cert", async () => {
    const send = await proxyWith({ trustedUpstream: "127.0.0.2" });
    expect(await send("127.0.0.2")).toEqual({ forwarded_for: "203.0.113.9, 127.0.0.2", client_cert: null });
    expect(await send("127.0.0.1")).toEqual({ forwarded_for: "127.0.0.1", client_cert: null });
  });

  test("with BULWARK_UPSTREAM_CLIENT_CERT too, that address's Client-Cert is passed on, nobody else's", async () => {
    const send = await proxyWith({ trustedUpstream: "127.0.0.2", upstreamClientCert: true });
    expect(await send("127.0.0.2")).toEqual({
      forwarded_for: "203.0.113.9, 127.0.0.2",
      client_cert: ":Zm9yZ2Vk:",
    });
    expect(await send("127.0.0.1")).toEqual({ forwarded_for: "127.0.0.1", client_cert: null });
  });
});

describe("deploy/nginx.conf", () => {
  const ADMIN = { email: "nginx@example.com", password: "nginx-password-123" };
  const PROXY_PORT = 20_000 + Math.floor(Math.random() * 20_000);
  let server: RunningServer;
  let nginx: ReturnType<typeof Bun.spawn> | undefined;
  let device: { key: string; certificate: string; id: string };
  let adminToken: string;

  /** curl through nginx from 127.0.0.2, trusting its test certificate; the body read as JSON. */
  function curl(
    path: string,
    options: { cert?: string; key?: string; headers?: string[]; body?: unknown; bodyFile?: string } = {},
  ) {
    const args = ["curl", "-sS", "--interface", "127.0.0.2", "--cacert", join(folder, "nginx/site.crt")];
    args.push("-w", "\n%{http_code}");
    if (options.cert && options.key)
      args.push("--cert", file("nginx/c.pem", options.cert), "--key", file("nginx/k.pem", options.key));
    for (const header of options.headers ?? []) args.push("-H", header);
    if (options.body !== undefined)
      args.push("-H", "content-type: application/json", "-d", JSON.stringify(options.body));
    if (options.bodyFile)
      args.push("-H", "content-type: application/json", "--data-binary", `@${options.bodyFile}`);
    args.push(`https://localhost:${PROXY_PORT}${path}`);
    const output = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" }).stdout.toString();
    const newline = output.lastIndexOf("\n");
    const text = output.slice(0, newline);
    // nginx's own refusals are HTML.
    const body = text.startsWith("{") ? JSON.parse(text) : { html: text };
    return { status: Number(output.slice(newline + 1)), body };
  }

  /** The shipped file, with this test's certificate files and ports, inside a minimal nginx.conf. */
  function nginxConfig(upstreamPort: string): string {
    const site = readFileSync(join(DEPLOY, "nginx.conf"), "utf8")
      .replaceAll("/etc/nginx/bulwark.crt", join(folder, "nginx/site.crt"))
      .replaceAll("/etc/nginx/bulwark.key", join(folder, "nginx/site.key"))
      .replaceAll("/etc/nginx/bulwark-device-ca.pem", join(folder, "nginx/device-ca.pem"))
      .replace("listen 443 ssl;", `listen 127.0.0.1:${PROXY_PORT} ssl;`)
      .replace("server 127.0.0.1:8080;", `server 127.0.0.1:${upstreamPort};`);
    file("nginx/bulwark.conf", site);
    const temp = join(folder, "nginx/temp");
    return file(
      "nginx/nginx.conf",
      `daemon off;
pid ${join(folder, "nginx/nginx.pid")};
error_log stderr;
events {}
http {
    access_log off;
    client_body_temp_path ${temp}/body;
    proxy_temp_path ${temp}/proxy;
    fastcgi_temp_path ${temp}/fastcgi;
    uwsgi_temp_path ${temp}/uwsgi;
    scgi_temp_path ${temp}/scgi;
    include ${join(folder, "nginx/bulwark.conf")};
}
`,
    );
  }

  beforeAll(async () => {
    // nginx's workers (nobody, when started as root) reach the temporary folders inside this one.
    chmodSync(folder, 0o711);
    const data = join(folder, "nginx-data");
    mkdirSync(data);
    server = await startServer(binary, data, {
      BULWARK_SERVER_TRUST_PROXY: "true",
      BULWARK_ADMIN_EMAIL: ADMIN.email,
      BULWARK_ADMIN_PASSWORD: ADMIN.password,
    });
    const { token, user } = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
    adminToken = token;
    const enrolled = await enrollWithCertificate(server, token, user.organization_id, {
      name: "Laptop behind nginx",
      platform: "linux",
    });
    device = enrolled.device;
    const ca = enrolled.ca;
    const site = selfSignedCertificate("/CN=localhost", "DNS:localhost");
    file("nginx/site.crt", site.certificate);
    file("nginx/site.key", site.key);
    file("nginx/device-ca.pem", ca);
    mkdirSync(join(folder, "nginx/temp"));

    const config = nginxConfig(new URL(server.url).port);
    const check = run(["nginx", "-t", "-c", config]);
    if (check.exitCode !== 0 || /\[(warn|emerg|alert)\]/.test(check.output))
      throw new Error(`nginx -t:\n${check.output}`);
    nginx = Bun.spawn(["nginx", "-c", config], { stdout: "ignore", stderr: "pipe" });
    const deadline = Date.now() + 15_000;
    while (curl("/api/v1/health").status !== 200) {
      if (Date.now() > deadline || nginx.exitCode !== null)
        throw new Error(
          `nginx did not come up: ${await new Response(nginx.stderr as ReadableStream).text()}`,
        );
      await Bun.sleep(100);
    }
  }, 120_000);

  afterAll(async () => {
    nginx?.kill("SIGTERM");
    await nginx?.exited;
    await server?.stop();
  });

  test("nginx -t accepts it: no error, no warning", () => {
    const check = run(["nginx", "-t", "-c", join(folder, "nginx/nginx.conf")]);
    expect(check.output).toContain("test is successful");
    expect(check.output).not.toMatch(/\[(warn|emerg|alert)\]/);
    expect(check.exitCode).toBe(0);
  });

  test("the health check answers through nginx over TLS", () => {
    const response = curl("/api/v1/health");
    expect(response.status).toBe(200);
    expect(response.body.status).toBe("ok");
  });

  test("the agent's certificate, checked by nginx, authenticates it through Client-Cert", () => {
    const response = curl("/api/v1/agent/checkin", { cert: device.certificate, key: device.key, body: {} });
    expect(response.status).toBe(200);
    expect(response.body.device_id).toBe(device.id);
  });

  test("a Client-Cert header the client wrote is replaced by nginx: 401", () => {
    const response = curl("/api/v1/agent/checkin", {
      headers: [`client-cert: ${encodeURIComponent(device.certificate)}`],
      body: {},
    });
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("device_token_required");
  });

  test("a certificate of another CA never reaches Bulwark: nginx refuses it", () => {
    const forged = forgeCertificate(device.id, "Default");
    const response = curl("/api/v1/agent/checkin", { cert: forged.certificate, key: forged.key, body: {} });
    expect(response.status).toBe(400);
  });

  test("a body over 1 MiB and headers over 16 KiB reach Bulwark, which refuses them with its JSON body", () => {
    const body = file("nginx/big.json", JSON.stringify({ email: "x".repeat(1_200_000), password: "p" }));
    const tooLarge = curl("/api/v1/auth/login", { bodyFile: body });
    expect([tooLarge.status, tooLarge.body.reason]).toEqual([413, "body_too_large"]);
    const longHeaders = curl("/api/v1/health", { headers: [`x-filler: ${"a".repeat(20_000)}`] });
    expect([longHeaders.status, longHeaders.body.reason]).toEqual([431, "headers_too_large"]);
  });

  test("the client address is nginx's peer, not an X-Forwarded-For the client wrote", async () => {
    const login = curl("/api/v1/auth/login", { headers: ["x-forwarded-for: 203.0.113.9"], body: ADMIN });
    expect(login.status).toBe(200);
    const audit = await call(server, "GET", "/api/v1/audit-logs?action=auth.login&page_size=1", adminToken);
    expect(audit.data[0].ip).toBe("127.0.0.2");
  });
});
