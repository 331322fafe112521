import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { ACTOR_TYPES, GDPR_REQUEST_STATUSES, GDPR_REQUEST_TYPES } from "./enums";

/**
 * Data-protection requests (export, erasure, restriction, objection): who asked, for whom, and what
 * Bulwark did. Kept after an erasure (with no personal data: ids, types and times only) as the record
 * that the request was answered.
 */
export const gdprRequests = sqliteTable(
  "gdpr_requests",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    /** The person the request is about. */
    userId: text("user_id").notNull(),
    type: text("type", { enum: GDPR_REQUEST_TYPES }).notNull(),
    status: text("status", { enum: GDPR_REQUEST_STATUSES }).notNull(),
    requestedByType: text("requested_by_type", { enum: ACTOR_TYPES }).notNull(),
    /** A user id, or an API key id. */
    requestedById: text("requested_by_id"),
    /** Objections: which processing the user objects to. */
    processing: text("processing"),
    /** Objections: the user's grounds, in their words (removed by an erasure). */
    reason: text("reason"),
    /** What Bulwark did, or why it refused, for people. */
    result: text("result").notNull(),
    /** Counts of what changed (sessions revoked, devices unassigned, log entries reduced...). */
    details: text("details", { mode: "json" }).$type<Record<string, number>>().notNull(),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at").notNull(),
  },
  (table) => [
    index("gdpr_requests_organization_idx").on(table.organizationId, table.createdAt),
    index("gdpr_requests_user_idx").on(table.userId, table.createdAt),
  ],
);
