import { randomBytes } from "node:crypto";
import { type Config, isPostgresConfig, keyFileOf } from "./config/config-schema";
import { openMigratedStore, type StoreHandle } from "./db/open-store";
import { loadOrCreateTokenKeys } from "./domain/auth/token-keys";
import { CheckInBatcher } from "./domain/devices/check-in-batcher";
import { assignVpnSubnets } from "./domain/organizations/assign-vpn-subnets";
import { sealedSecretsReadable } from "./domain/system/check-sealed-secrets";
import { ensureWireGuardServerKey } from "./domain/vpn/server-key";
import { sealWebhookSecrets } from "./domain/webhooks/seal-webhook-secrets";
import type { AppDeps } from "./http/app-deps";
import { InMemoryRateLimiter } from "./http/rate-limiter";
import { type Clock, systemClock } from "./lib/clock";
import { createLogger, resolveLogFormat } from "./lib/log";
import { createMetrics } from "./lib/metrics";
import {
  createSecretBox,
  loadOrCreateKeyFile,
  newSecretKey,
  readKeyFile,
  writeNewKeyFile,
} from "./lib/secret-box";
import { ServiceActivity } from "./lib/service-activity";
import { VERSION } from "./version";

/**
 * The key that seals stored secrets: `database.key_file`, by default `<database>.key` beside the database
 * file, never in it, so that a copy of the database or a `bulwark backup` alone reveals none of them. An
 * in-memory database without a key file gets a key that lives as long as the process.
 */
function secretKeyOf(database: Readonly<Config["database"]>): { key: Uint8Array; isNew: boolean } {
  if (isPostgresConfig(database)) {
    // Written only once it is known not to be needed for secrets already in the database (boot below).
    const key = readKeyFile(keyFileOf(database));
    return key ? { key, isNew: false } : { key: newSecretKey(), isNew: true };
  }
  return database.path === ":memory:" && database.key_file === ""
    ? { key: randomBytes(32), isNew: false }
    : { key: loadOrCreateKeyFile(keyFileOf(database)), isNew: false };
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
  const secretKey = secretKeyOf(config.database);
  const domainDeps = {
    db: database.db,
    config,
    clock,
    secrets: createSecretBox(secretKey.key),
  };
  const deps: AppDeps = {
    ...domainDeps,
    keys,
    rateLimiter: new InMemoryRateLimiter(),
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
        secretKey.isNew
          ? `${keyFileOf(config.database)} does not exist, and ${database.label} holds secrets sealed with another key: every server on this database needs the same database.key_file (copy it from a server already running on it; nothing was written)`
          : `${keyFileOf(config.database)} does not open the secrets sealed in ${database.label}: every server on this database needs the same database.key_file (copy it from a server already running on it)`,
      );
    }
    deps.log.warn(
      `${keyFileOf(config.database)} does not open the secrets sealed in this database (restored or copied without its key file?): webhook signatures, authenticator apps, device certificates and the VPN server export fail until that key file is put back`,
    );
  }
  // A first server on a PostgreSQL database creates the key file, once nothing sealed stands against it.
  if (secretKey.isNew) writeNewKeyFile(keyFileOf(config.database), secretKey.key);
  await sealWebhookSecrets(deps);
  await ensureWireGuardServerKey(deps);
  const vpnSubnets = await assignVpnSubnets(deps);
  return { deps, database, appliedMigrations: applied, vpnSubnets };
}
