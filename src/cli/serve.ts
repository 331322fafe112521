import { buildApp } from "../app";
import { bootDependencies } from "../boot";
import { type Config, isPostgresConfig } from "../config/config-schema";
import { configWarnings } from "../config/config-warnings";
import { effectiveBaseUrl, effectiveReplicaName } from "../config/load-config";
import { warmUpUnfilteredDevicePages } from "../db/lookups";
import { acquireServeLock } from "../db/serve-lock";
import { checkFirstAdminSettings, ensureFirstAdmin } from "../domain/users/bootstrap-admin";
import type { AppDeps } from "../http/app-deps";
import { assertHostResolves, ListenError, listenError, listenHttp } from "../http/http-server";
import { consoleAssets } from "../http/routes/console.routes";
import { readTlsFiles, startTlsFront, TlsClients, type TlsFront, TlsSetupError } from "../http/tls-front";
import { jobLeaseSeconds, leaseLeadership, soleServer } from "../jobs/job-leadership";
import { startJobs } from "../jobs/scheduler";
import { createWebhookDispatcher } from "../jobs/webhook-dispatcher";
import { SERVER_KEY_ROTATED } from "./admin-create";

/**
 * Starts the TLS front on the configured address, handing connections to the HTTP server's loopback
 * port; a listen or certificate problem is a ListenError naming it.
 */
async function startTls(deps: AppDeps, upstreamPort: number): Promise<TlsFront> {
  const { host, port, tls_cert, tls_key } = deps.config.server;
  const clients = new TlsClients();
  deps.tlsClients = clients;
  try {
    return await startTlsFront({
      hostname: host,
      port,
      certFile: tls_cert,
      keyFile: tls_key,
      upstreamPort,
      clients,
    });
  } catch (error) {
    if (error instanceof TlsSetupError) throw new ListenError(error.message);
    throw listenError(error, host, port);
  }
}

const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|::1|localhost)$/;

/** `bulwark serve`: migrate, create the first admin if needed, start the jobs, listen; stop cleanly on a signal. */
export async function serveCommand(config: Readonly<Config>): Promise<void> {
  checkFirstAdminSettings(config.admin);
  // Unusable TLS files stop the start before anything is created or migrated.
  if (config.server.tls_cert !== "") {
    try {
      readTlsFiles(config.server.tls_cert, config.server.tls_key);
    } catch (error) {
      if (error instanceof TlsSetupError) throw new ListenError(error.message);
      throw error;
    }
  }
  // One server per SQLite file; PostgreSQL takes any number of them (replicas are the point).
  const lock =
    isPostgresConfig(config.database) || config.database.path === ":memory:"
      ? null
      : acquireServeLock(config.database.path);
  const { deps, database, appliedMigrations, vpnSubnets } = await bootDependencies(config);
  const { log } = deps;
  if (appliedMigrations.length > 0)
    log.info(`Applied ${appliedMigrations.length} migration(s): ${appliedMigrations.join(", ")}`, {
      migrations: appliedMigrations,
    });
  if (vpnSubnets.organizations > 0)
    log.warn(
      `Gave ${vpnSubnets.organizations} organization(s) a new subnet of vpn.address_pool and ${vpnSubnets.devices} device(s) a new address in it (they learn it at their next check-in): export the server configuration again with \`bulwark vpn server-config\` and apply it on the WireGuard server`,
      { organizations: vpnSubnets.organizations, devices: vpnSubnets.devices },
    );
  const app = buildApp(deps);
  // Bundled (from source) and compressed now, so the first visitor does not wait and a problem shows here.
  consoleAssets().catch((error: unknown) =>
    log.error(`the console could not be prepared: ${(error as Error).message}`, { error }),
  );
  await assertHostResolves(config.server.host);
  const isTls = config.server.tls_cert !== "";
  // Until the first admin, the jobs and the dispatcher are there, health says `starting` and other
  // requests wait (observe-requests.ts).
  deps.activity.beginStart();
  // With TLS, the HTTP server listens on a loopback port only the TLS front in this process uses.
  const server = listenHttp(
    app,
    deps,
    isTls ? { hostname: "127.0.0.1", port: 0 } : { hostname: config.server.host, port: config.server.port },
  );
  const tlsFront = isTls ? await startTls(deps, server.port ?? 0) : null;
  const port = tlsFront?.port ?? server.port ?? config.server.port;
  // Before the first request is handled (this runs synchronously after listening): the JWT issuer and
  // every other use of the public URL follow the port really listened on when base_url is not set.
  // The replica's name follows it too, for health, metrics and the job lease.
  deps.config = Object.freeze({
    ...config,
    server: Object.freeze({
      ...config.server,
      base_url: effectiveBaseUrl(config, port),
      replica_name: effectiveReplicaName(config, port),
    }),
  });
  // Only once listening has worked: a first-run password printed by a server that then failed to
  // start would be lost, and the next start (finding a user) would print none.
  const firstAdmin = await ensureFirstAdmin(deps);
  // On PostgreSQL the servers on the database take turns by a lease; on SQLite this one is alone.
  const leadership =
    database.store === "postgresql"
      ? leaseLeadership(database.db, {
          name: deps.config.server.replica_name,
          leaseSeconds: jobLeaseSeconds(config),
          log,
        })
      : soleServer(deps.config.server.replica_name);
  const jobs = startJobs(deps, leadership);
  // The largest organizations' deep device-list pages, ready before anyone asks (device-page-anchors.ts).
  warmUpUnfilteredDevicePages(deps.db).catch((error: unknown) =>
    log.debug("device list anchors not found at start", { error: String(error) }),
  );
  const webhookDispatcher = createWebhookDispatcher(deps);
  webhookDispatcher.start();
  deps.activity.finishStart();
  const url = `${isTls ? "https" : "http"}://${config.server.host.includes(":") ? `[${config.server.host}]` : config.server.host}:${port}`;
  log.announce(`Bulwark ${deps.version} listening on ${url}`, {
    version: deps.version,
    url,
    console: `${deps.config.server.base_url}/console/`,
    docs: `${url}/api/v1/docs`,
    metrics: config.metrics.enabled ? `${url}/metrics` : undefined,
    // On PostgreSQL the URL's user, host, port and database (never its password), not the unused path.
    database: database.store === "postgresql" ? database.label : config.database.path,
  });
  // At the public address (base_url), not the listen address: passkeys and SSO are bound to it.
  log.announce(`Console: ${deps.config.server.base_url}/console/`);
  const { trust_proxy, trusted_proxies, host } = config.server;
  if (trust_proxy && trusted_proxies.length === 0 && !LOOPBACK_HOST.test(host))
    log.warn(
      `server.trust_proxy honours X-Forwarded-For and Client-Cert from loopback peers only, and ${host} is reachable from elsewhere: a proxy on another host, or behind Docker's port forwarding, needs its address in server.trusted_proxies`,
    );
  if (firstAdmin) {
    // The one message that carries a password, on purpose: the generated one, printed once, on first run.
    log.announce(
      `First run: created the admin ${firstAdmin.email}${firstAdmin.password ? ` with the password ${firstAdmin.password}` : " (password from BULWARK_ADMIN_PASSWORD)"}`,
    );
    if (firstAdmin.password)
      log.announce(
        "This password is shown only once. Change it in the console (your account page) or with PUT /api/v1/users/me/password.",
      );
    log.announce(
      `Sign in: curl -s ${url}/api/v1/auth/login -H 'content-type: application/json' -d '{"email":"${firstAdmin.email}","password":"${firstAdmin.password ?? "<your password>"}"}'`,
    );
  } else {
    log.announce(`Sign in: POST ${url}/api/v1/auth/login with {"email": ..., "password": ...}`);
  }
  for (const warning of configWarnings(config)) log.warn(warning);
  if (firstAdmin?.isServerKeyRotated) log.warn(SERVER_KEY_ROTATED);
  let isStopping = false;
  const stop = async (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    log.announce(`${signal} received: stopping`);
    jobs.stop();
    await tlsFront?.stop();
    await server.stop();
    await webhookDispatcher.stop();
    await jobs.idle();
    await leadership.release();
    await database.close();
    lock?.release();
    log.announce("stopped");
    process.exit(0);
  };
  process.on("SIGHUP", () => {
    if (!tlsFront) return;
    try {
      tlsFront.reload();
      log.info("SIGHUP received: reloaded server.tls_cert and server.tls_key");
    } catch (error) {
      log.error(`SIGHUP received: kept the current certificate: ${(error as Error).message}`);
    }
  });
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
