import { buildApp } from "../app";
import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { effectiveBaseUrl } from "../config/load-config";
import { acquireServeLock } from "../db/serve-lock";
import { checkFirstAdminSettings, ensureFirstAdmin } from "../domain/users/bootstrap-admin";
import { assertHostResolves, listenHttp } from "../http/http-server";
import { startJobs } from "../jobs/scheduler";
import { createWebhookDispatcher } from "../jobs/webhook-dispatcher";

/** `bulwark serve`: migrate, create the first admin if needed, start the jobs, listen; stop cleanly on a signal. */
export async function serveCommand(config: Readonly<Config>): Promise<void> {
  checkFirstAdminSettings(config.admin);
  const lock = config.database.path === ":memory:" ? null : acquireServeLock(config.database.path);
  const { deps, database, appliedMigrations } = await bootDependencies(config);
  if (appliedMigrations.length > 0)
    console.log(`Applied ${appliedMigrations.length} migration(s): ${appliedMigrations.join(", ")}`);
  const app = buildApp(deps);
  await assertHostResolves(config.server.host);
  const server = listenHttp(app, deps, { hostname: config.server.host, port: config.server.port });
  const port = server.port ?? config.server.port;
  // Before the first request is handled (this runs synchronously after listening): the JWT issuer and
  // every other use of the public URL follow the port really listened on when base_url is not set.
  deps.config = Object.freeze({
    ...config,
    server: Object.freeze({ ...config.server, base_url: effectiveBaseUrl(config, port) }),
  });
  // Only once listening has worked: a first-run password printed by a server that then failed to
  // start would be lost, and the next start (finding a user) would print none.
  const firstAdmin = await ensureFirstAdmin(deps);
  const jobs = startJobs(deps);
  const webhookDispatcher = createWebhookDispatcher(deps);
  webhookDispatcher.start();
  const url = `http://${config.server.host.includes(":") ? `[${config.server.host}]` : config.server.host}:${port}`;
  console.log(`Bulwark ${deps.version} listening on ${url}`);
  console.log(`  API docs: ${url}/api/v1/docs   database: ${config.database.path}`);
  if (firstAdmin) {
    console.log("");
    console.log(
      `First run: created the admin ${firstAdmin.email}${firstAdmin.password ? ` with the password ${firstAdmin.password}` : " (password from BULWARK_ADMIN_PASSWORD)"}`,
    );
    if (firstAdmin.password)
      console.log("  This password is shown only once. Change it with PUT /api/v1/users/me/password.");
    console.log("  Sign in:");
    console.log(
      `  curl -s ${url}/api/v1/auth/login -H 'content-type: application/json' -d '{"email":"${firstAdmin.email}","password":"${firstAdmin.password ?? "<your password>"}"}'`,
    );
  } else {
    console.log(`  Sign in: POST ${url}/api/v1/auth/login with {"email": ..., "password": ...}`);
  }
  let isStopping = false;
  const stop = async (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    console.log(`${signal} received: stopping`);
    jobs.stop();
    await server.stop();
    await webhookDispatcher.stop();
    await jobs.idle();
    database.close();
    lock?.release();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
