import type { Config } from "./config/config-schema";
import { type DatabaseHandle, openDatabase } from "./db/client";
import { migrateDatabase } from "./db/migrate";
import { loadOrCreateTokenKeys } from "./domain/auth/token-keys";
import type { AppDeps } from "./http/app-deps";
import { InMemoryRateLimiter } from "./http/rate-limiter";
import { type Clock, systemClock } from "./lib/clock";
import { VERSION } from "./version";

/** Opens and migrates the database, loads the signing keys and assembles the app's dependencies. */
export async function bootDependencies(
  config: Readonly<Config>,
  clock: Clock = systemClock,
): Promise<{ deps: AppDeps; database: DatabaseHandle; appliedMigrations: string[] }> {
  const database = openDatabase({ path: config.database.path, synchronous: config.database.synchronous });
  const { applied } = migrateDatabase(database.sqlite, undefined, `database ${config.database.path}`);
  const keys = await loadOrCreateTokenKeys(database.db, clock.now());
  const deps: AppDeps = {
    db: database.db,
    config,
    clock,
    keys,
    rateLimiter: new InMemoryRateLimiter(),
    version: VERSION,
    startedAt: clock.now(),
  };
  return { deps, database, appliedMigrations: applied };
}
