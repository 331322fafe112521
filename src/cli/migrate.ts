import type { Config } from "../config/config-schema";
import { openMigratedStore } from "../db/open-store";

/** `bulwark migrate`: check the database's schema, apply pending migrations and report (either store). */
export async function migrateCommand(config: Readonly<Config>): Promise<void> {
  const { handle, applied, total } = await openMigratedStore(config.database);
  try {
    console.log(
      applied.length > 0
        ? `Applied ${applied.length} migration(s): ${applied.join(", ")}`
        : `Database is up to date (${total} migration(s))`,
    );
  } finally {
    await handle.close();
  }
}
