/**
 * Preloaded before every test file (bunfig.toml). On TEST_STORE=postgresql it starts the throwaway
 * cluster and migrates the template database before the first test, so that no test's time limit pays
 * for initdb and the migrations.
 */
import { newMigratedPgDatabase } from "./pg-stores";

if (process.env.TEST_STORE === "postgresql") await newMigratedPgDatabase();
