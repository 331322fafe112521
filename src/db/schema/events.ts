import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { DELIVERY_STATUSES } from "./enums";

/** The outbox: one row per domain event, written in the transaction of the change that caused it. */
export const events = sqliteTable(
  "events",
  {
    sequence: integer("sequence").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    organizationId: text("organization_id").notNull(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    uniqueIndex("events_id_unique").on(table.id),
    index("events_organization_idx").on(table.organizationId, table.sequence),
    // The retention purge reads only the events past retention, not the whole outbox.
    index("events_created_idx").on(table.createdAt),
  ],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    secret: text("secret").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    disabledReason: text("disabled_reason"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("webhooks_organization_idx").on(table.organizationId, table.createdAt)],
);

/**
 * One row per (event, subscription): fanned out when the event is recorded, so a delivery exists
 * durably before any attempt is made. The row id is the delivery id sent on every attempt.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    eventSequence: integer("event_sequence")
      .notNull()
      .references(() => events.sequence),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    lastDurationMs: integer("last_duration_ms"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
  },
  (table) => [
    index("webhook_deliveries_due_idx").on(table.status, table.nextAttemptAt),
    index("webhook_deliveries_webhook_idx").on(table.webhookId, table.eventSequence),
    index("webhook_deliveries_completed_idx").on(table.completedAt),
    // Whether an event still has a delivery (the retention purge), without scanning every delivery.
    index("webhook_deliveries_event_idx").on(table.eventSequence),
  ],
);

/** Every HTTP attempt of a delivery, for the delivery log. */
export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    startedAt: text("started_at").notNull(),
  },
  (table) => [index("webhook_delivery_attempts_delivery_idx").on(table.deliveryId, table.attempt)],
);
