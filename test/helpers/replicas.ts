/**
 * Bulwark replicas as an operator runs them: several `dist/bulwark serve` on one PostgreSQL database,
 * behind HAProxy with deploy/haproxy-replicas.cfg as shipped (plain HTTP: BULWARK_PLAIN_HTTP), started
 * at once. Used by the HTTP suites' replicas pass (TEST_TARGET=replicas, test/helpers/test-app.ts) and
 * by test/binary/replicas.test.ts.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type RunningServer, startServer } from "./binary";
import { freePort } from "./pg-cluster";

export const HAPROXY_REPLICAS_CFG = join(import.meta.dir, "../../deploy/haproxy-replicas.cfg");

export interface RunningProxy {
  url: string;
  process: ReturnType<typeof Bun.spawn>;
  stop(): Promise<void>;
}

export interface HaproxyOptions {
  /** Goes before the command (the benchmark's `taskset`). */
  prefix?: string[];
  /**
   * BULWARK_TRUSTED_UPSTREAM: the address whose X-Forwarded-For HAProxy passes on, as from a load
   * balancer that ends TLS before it. The HTTP suites' client plays that part.
   */
  trustedUpstream?: string;
  /** BULWARK_UPSTREAM_CLIENT_CERT: that balancer's Client-Cert is passed on too. */
  upstreamClientCert?: boolean;
}

/**
 * HAProxy with deploy/haproxy-replicas.cfg as shipped (plain HTTP) on `port`, balancing over `replicas`
 * (host:port each).
 */
export async function startHaproxy(
  port: number,
  replicas: string[],
  options: HaproxyOptions = {},
): Promise<RunningProxy> {
  if (replicas.length !== 2) throw new Error("deploy/haproxy-replicas.cfg names two replicas");
  const env = {
    PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin`,
    BULWARK_PLAIN_HTTP: "1",
    BULWARK_BIND: `127.0.0.1:${port}`,
    BULWARK_REPLICA_1: replicas[0] as string,
    BULWARK_REPLICA_2: replicas[1] as string,
    ...(options.trustedUpstream ? { BULWARK_TRUSTED_UPSTREAM: options.trustedUpstream } : {}),
    ...(options.upstreamClientCert ? { BULWARK_UPSTREAM_CLIENT_CERT: "1" } : {}),
  };
  const child = Bun.spawn([...(options.prefix ?? []), "haproxy", "-db", "-f", HAPROXY_REPLICAS_CFG], {
    env,
    stdout: "ignore",
    stderr: "pipe",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`haproxy exited (${child.exitCode}): ${await new Response(child.stderr).text()}`);
    try {
      await fetch(`${url}/api/v1/health`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error("haproxy did not listen in time");
      await Bun.sleep(20);
    }
  }
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await child.exited;
    },
  };
}

export interface ReplicaSet {
  /** HAProxy's URL: where clients send their requests. */
  url: string;
  /** The public URL the replicas share (base_url): HAProxy's, with `localhost` for its address. */
  baseUrl: string;
  replicas: RunningServer[];
  proxy: RunningProxy;
  /** Every replica's output, one after the other. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `count` (2) replicas at once from `folder` (each with a folder of its own inside it) with `env`,
 * the same base_url (HAProxy's address) and the same key file, then HAProxy in front of them.
 */
export async function startReplicaSet(
  binary: string,
  folder: string,
  env: Record<string, string>,
  options: Pick<HaproxyOptions, "trustedUpstream" | "upstreamClientCert"> = {},
): Promise<ReplicaSet> {
  const port = await freePort();
  const baseUrl = env.BULWARK_SERVER_BASE_URL ?? `http://localhost:${port}`;
  const shared = {
    BULWARK_DATABASE_KEY_FILE: join(folder, "bulwark.key"),
    ...env,
    BULWARK_SERVER_BASE_URL: baseUrl,
  };
  const replicas = await Promise.all(
    [1, 2].map((index) => {
      const own = join(folder, `replica-${index}`);
      mkdirSync(own, { recursive: true });
      return startServer(binary, own, shared);
    }),
  );
  const proxy = await startHaproxy(
    port,
    replicas.map((replica) => new URL(replica.url).host),
    options,
  );
  return {
    url: proxy.url,
    baseUrl,
    replicas,
    proxy,
    output: () => replicas.map((replica) => replica.output()).join(""),
    stop: async () => {
      await proxy.stop();
      await Promise.all(replicas.map((replica) => replica.stop()));
    },
  };
}
