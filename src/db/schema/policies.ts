import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const policies = sqliteTable(
  "policies",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    name: text("name").notNull(),
    /**
     * The name as uniqueness compares it (`policyNameKey`: case folded), so that "Finance laptops" and
     * "finance laptops" cannot both exist in an organization.
     */
    nameKey: text("name_key").notNull(),
    description: text("description").notNull().default(""),
    currentVersion: integer("current_version").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("policies_organization_name_key_unique").on(table.organizationId, table.nameKey),
    index("policies_organization_idx").on(table.organizationId, table.createdAt),
  ],
);

/** Append-only: every version's full document, with who changed it and what changed. */
export const policyVersions = sqliteTable(
  "policy_versions",
  {
    policyId: text("policy_id")
      .notNull()
      .references(() => policies.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    policyData: text("policy_data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    changes: text("changes", { mode: "json" }).$type<string[]>().notNull(),
    changedBy: text("changed_by").notNull(),
    changedAt: text("changed_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.policyId, table.version] })],
);
