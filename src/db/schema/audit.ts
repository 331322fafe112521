import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { ACTOR_TYPES, OUTCOMES } from "./enums";

/** Append-only record of every mutation and sign-in attempt. */
export const auditLogs = sqliteTable(
  "audit_logs",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id"),
    actorType: text("actor_type", { enum: ACTOR_TYPES }).notNull(),
    actorId: text("actor_id"),
    actorLabel: text("actor_label"),
    action: text("action").notNull(),
    targetType: text("target_type"),
    targetId: text("target_id"),
    ip: text("ip"),
    outcome: text("outcome", { enum: OUTCOMES }).notNull(),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    index("audit_logs_organization_idx").on(table.organizationId, table.createdAt),
    index("audit_logs_actor_idx").on(table.organizationId, table.actorId, table.createdAt),
    index("audit_logs_action_idx").on(table.organizationId, table.action, table.createdAt),
    // Entries about one user (data-protection exports and erasures).
    index("audit_logs_target_idx").on(table.organizationId, table.targetId),
    // Sign-in attempts name the email tried; an erasure finds the erased person's among them.
    index("audit_logs_anonymous_label_idx").on(table.actorLabel).where(sql`${table.actorType} = 'anonymous'`),
  ],
);
