import { defineConfig } from "drizzle-kit";

/**
 * The PostgreSQL migrations (migrations/pg): drizzle-kit diffs src/db/schema-pg, which
 * scripts/generate-pg-schema.ts writes from src/db/schema. `npm run db:generate` runs both configs.
 */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema-pg/index.ts",
  out: "./migrations/pg",
});
