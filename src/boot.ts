import { randomBytes } from "node:crypto";
import { type Config, isPostgresConfig, keyFileOf } from "./config/config-schema";
import { openMigratedStore, type StoreHandle } from "./db/open-store";
import { loadOrCreateTokenKeys } from "./domain/auth/token-keys";
import { CheckInBatcher } from "./domain/devices/check-in-batcher";
import { assignVpnSubnets } from "./domain/organizations/assign-vpn-subnets";
import { sealedSecretsReadable, sealKeyCheck } from "./domain/system/check-sealed-secrets";
import { ensureWireGuardServerKey } from "./domain/vpn/server-key";
import { sealWebhookSecrets } from "./domain/webhooks/seal-webhook-secrets";
import type { AppDeps } from "./http/app-deps";
import { InMemoryRateLimiter } from "./http/rate-limiter";
import { SharedRateLimiter } from "./http/shared-rate-limiter";
import { type Clock, systemClock } from "./lib/clock";
import { createLogger, resolveLogFormat } from "./lib/log";
import { createMetrics } from "./lib/metrics";
import {
  claimKeyFile,
  createSecretBox,
  loadOrCreateKeyFile,
  newSecretKey,
  readKeyFile,
} from "./lib/secret-box";
import { ServiceActivity } from "./lib/service-activity";
import { VERSION } from "./version";

/**
 * The key that seals stored secrets: `database.key_file`, by default `<database>.key` beside the database
 * file, never in it, so that a copy of the database or a `bulwark backup` alone reveals none of them. An
 * in-memory database without a key file gets a key that lives as long as the process.
 *
 * On PostgreSQL the file must exist unless the database holds nothing sealed yet: the first server then
 * creates it. Replicas started at once with one key file (a shared volume) settle on one key: the file
 * appears whole or not at all (written aside, then linked into place), and a server that finds it
 * created meanwhile uses it. Nothing is sealed before the file is in place.
 */
async function settleSecretKey(
  database: Readonly<Config["database"]>,
  db: StoreHandle["db"],
): Promise<{ key: Uint8Array; isMissing: boolean }> {
  if (!isPostgresConfig(database))
    return database.path === ":memory:" && database.key_file === ""
      ? { key: randomBytes(32), isMissing: false }
      : { key: loadOrCreateKeyFile(keyFileOf(database)), isMissing: false };
  const path = keyFileOf(database);
  const existing = readKeyFile(path);
  if (existing) return { key: existing, isMissing: false };
  const fresh = newSecretKey();
  // A new key opens nothing sealed: readable means nothing is sealed yet, and the file can be created.
  if (await sealedSecretsReadable({ db, secrets: createSecretBox(fresh) }))
    return { key: claimKeyFile(path, fresh), isMissing: false };
  // Something was sealed: by a server started at the same moment that has just created the file, or
  // with a key this server has not been given.
  const created = readKeyFile(path);
  return created ? { key: created, isMissing: false } : { key: fresh, isMissing: true };
}

/** The key file does not open the secrets a PostgreSQL database holds: the server refuses to start. */
export class SecretKeyMismatch extends Error {}

/**
 * Opens the database, checks that its schema is Bulwark's (a file put in place by hand could carry a
 * trigger of its own), migrates it, loads the signing keys, gives organizations their VPN subnets where
 * the configuration asks for new ones, and assembles the app's dependencies.
 */
export async function bootDependencies(
  config: Readonly<Config>,
  clock: Clock = systemClock,
  /** Where log lines go; standard output by default. */
  logWrite?: (line: string) => void,
): Promise<{
  deps: AppDeps;
  database: StoreHandle;
  appliedMigrations: string[];
  /** Organizations given a (new) VPN subnet at this start, and devices moved into theirs. */
  vpnSubnets: { organizations: number; devices: number };
}> {
  const { handle: database, applied } = await openMigratedStore(config.database);
  const keys = await loadOrCreateTokenKeys(database.db, clock.now());
  const startedAt = clock.now();
  const log = createLogger({
    format: resolveLogFormat(config.log.format),
    level: config.log.level,
    write: logWrite,
  });
  const metrics = createMetrics(VERSION, startedAt);
  const secretKey = await settleSecretKey(config.database, database.db);
  const domainDeps = {
    db: database.db,
    config,
    clock,
    secrets: createSecretBox(secretKey.key),
  };
  const deps: AppDeps = {
    ...domainDeps,
    keys,
    // One server on a SQLite file counts in memory; the servers on a PostgreSQL database count together.
    rateLimiter:
      database.store === "postgresql" ? new SharedRateLimiter(database.db, log) : new InMemoryRateLimiter(),
    version: VERSION,
    startedAt,
    log,
    metrics,
    checkIns: new CheckInBatcher(domainDeps, {
      committed: (size) => metrics.observeCheckInBatch(size),
      failed: (error, size) => log.error("check-ins could not be saved", { check_ins: size, error }),
    }),
    activity: new ServiceActivity(),
    ...(database.store === "postgresql" ? { connectionPool: database.poolState } : {}),
  };
  if (!(await sealedSecretsReadable(deps))) {
    // Replicas share one database: a replica with another key would seal secrets the others cannot open.
    if (database.store === "postgresql") {
      await database.close();
      throw new SecretKeyMismatch(
        secretKey.isMissing
          ? `${keyFileOf(config.database)} does not exist, and ${database.label} holds secrets sealed with another key: every server on this database needs the same database.key_file (copy it from a server already running on it; nothing was written)`
          : `${keyFileOf(config.database)} does not open the secrets sealed in ${database.label}: every server on this database needs the same database.key_file (copy it from a server already running on it)`,
      );
    }
    deps.log.warn(
      `${keyFileOf(config.database)} does not open the secrets sealed in this database (restored or copied without its key file?): webhook signatures, authenticator apps, device certificates and the VPN server export fail until that key file is put back`,
    );
  }
  if (database.store === "postgresql") await sealKeyCheck(deps);
  await sealWebhookSecrets(deps);
  await ensureWireGuardServerKey(deps);
  // Replicas on different hosts, each given no key file, would each create one: the first to seal the
  // key check wins, and any other finds here that its key does not open it, before it serves.
  if (database.store === "postgresql" && !(await sealedSecretsReadable(deps))) {
    await database.close();
    throw new SecretKeyMismatch(
      `${keyFileOf(config.database)} does not open the secrets another server has just sealed in ${database.label}: every server on this database needs the same database.key_file (copy it from the server that started first)`,
    );
  }
  const vpnSubnets = await assignVpnSubnets(deps);
  return { deps, database, appliedMigrations: applied, vpnSubnets };
}
