import type { Config } from "../config/config-schema";
import { openDatabase } from "../db/client";
import { migrateDatabase } from "../db/migrate";
import { assertBulwarkSchema } from "../db/schema-check";

/** `bulwark migrate`: check the database's schema, apply pending migrations and report. */
export function migrateCommand(config: Readonly<Config>): void {
  const database = openDatabase({ path: config.database.path, synchronous: config.database.synchronous });
  try {
    const label = `database ${config.database.path}`;
    assertBulwarkSchema(database.sqlite, label);
    const result = migrateDatabase(database.sqlite, { label });
    console.log(
      result.applied.length > 0
        ? `Applied ${result.applied.length} migration(s): ${result.applied.join(", ")}`
        : `Database is up to date (${result.total} migration(s))`,
    );
  } finally {
    database.close();
  }
}
