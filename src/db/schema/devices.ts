import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  COMPLIANCE_STATUSES,
  DEVICE_STATUSES,
  type ENFORCEMENT_OUTCOMES,
  PHONE_KEY_SOURCES,
  PLATFORMS,
  WIPE_STATUSES,
} from "./enums";

export const enrollmentTokens = sqliteTable(
  "enrollment_tokens",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    maxUses: integer("max_uses"),
    uses: integer("uses").notNull().default(0),
    userId: text("user_id"),
    policyId: text("policy_id"),
    /** Who created it, as audit rows show them: an email or an API key's name. */
    createdBy: text("created_by").notNull(),
    /** The user who created it (directly or with one of their API keys), for data-protection exports. */
    createdByUserId: text("created_by_user_id"),
    createdAt: text("created_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (table) => [
    uniqueIndex("enrollment_tokens_hash_unique").on(table.tokenHash),
    index("enrollment_tokens_organization_idx").on(table.organizationId, table.createdAt),
    index("enrollment_tokens_creator_idx").on(table.createdByUserId),
  ],
);

export const devices = sqliteTable(
  "devices",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    userId: text("user_id"),
    deviceName: text("device_name").notNull(),
    platform: text("platform", { enum: PLATFORMS }).notNull(),
    agentVersion: text("agent_version").notNull(),
    osVersion: text("os_version"),
    hardwareId: text("hardware_id").notNull(),
    status: text("status", { enum: DEVICE_STATUSES }).notNull(),
    suspendedReason: text("suspended_reason"),
    lastSeen: text("last_seen").notNull(),
    enrolledAt: text("enrolled_at").notNull(),
    /** Explicitly assigned policy; null means the organization default. */
    policyId: text("policy_id"),
    appliedPolicyId: text("applied_policy_id"),
    appliedPolicyVersion: integer("applied_policy_version"),
    policyAppliedAt: text("policy_applied_at"),
    vpnAddress: integer("vpn_address"),
    vpnPublicKey: text("vpn_public_key").notNull(),
    facts: text("facts", { mode: "json" }).$type<Record<string, boolean>>(),
    /** Facts of the last report that this server does not know (a newer agent's, or a misspelling). */
    ignoredFacts: text("ignored_facts", { mode: "json" }).$type<
      Record<string, string | number | boolean | null>
    >(),
    /** What the agent last said of each setting it applies: [{setting, outcome, detail?}]. */
    enforcement: text("enforcement", { mode: "json" }).$type<
      { setting: string; outcome: (typeof ENFORCEMENT_OUTCOMES)[number]; detail?: string }[]
    >(),
    /** When the agent last reported its enforcement. */
    enforcementReportedAt: text("enforcement_reported_at"),
    complianceStatus: text("compliance_status", { enum: COMPLIANCE_STATUSES }).notNull().default("unknown"),
    complianceViolations: text("compliance_violations", { mode: "json" })
      .$type<unknown[]>()
      .notNull()
      .default([]),
    /** Rules that could not be checked for want of a reported fact or OS version. */
    complianceMissing: text("compliance_missing", { mode: "json" }).$type<string[]>().notNull().default([]),
    /** When compliance was last evaluated from reported facts or an OS version; null before any report. */
    complianceCheckedAt: text("compliance_checked_at"),
    /**
     * The stored compliance may be out of date (its policy changed) and waits for re-evaluation in
     * batches. Rows that were never evaluated (or predate the flag) default to stale.
     */
    complianceStale: integer("compliance_stale", { mode: "boolean" }).notNull().default(true),
    /**
     * When a device.checkin entry was last written: a check-in that changes nothing the device reports
     * is logged at most once per devices.checkin_log_interval_seconds.
     */
    checkinLoggedAt: text("checkin_logged_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("devices_vpn_address_unique").on(table.vpnAddress),
    // One WireGuard peer per key: a key is free again once its device is wiped.
    uniqueIndex("devices_vpn_public_key_unique")
      .on(table.vpnPublicKey)
      .where(sql`${table.status} != 'wiped'`),
    index("devices_organization_idx").on(table.organizationId, table.enrolledAt, table.id),
    index("devices_organization_status_idx").on(table.organizationId, table.status, table.enrolledAt),
    index("devices_organization_platform_idx").on(table.organizationId, table.platform, table.enrolledAt),
    index("devices_organization_user_idx").on(table.organizationId, table.userId, table.enrolledAt),
    // The compliance filter's pages, and the summary's counts by compliance from the index alone.
    index("devices_organization_compliance_idx").on(
      table.organizationId,
      table.complianceStatus,
      table.enrolledAt,
    ),
    // Counts and pages of a policy's devices come from this index alone (status ends it for the wiped filter).
    index("devices_organization_policy_idx").on(
      table.organizationId,
      table.policyId,
      table.enrolledAt,
      table.id,
      table.status,
    ),
    index("devices_organization_hardware_idx").on(table.organizationId, table.hardwareId),
    index("devices_status_last_seen_idx").on(table.status, table.lastSeen),
    index("devices_compliance_stale_idx").on(table.complianceStale, table.organizationId, table.id),
  ],
);

/**
 * How many devices of an organization are in each status, platform and compliance status: kept by
 * triggers on devices (migration 0009), so filtered totals and summaries at a million devices add up a
 * few rows instead of counting rows. Rows may reach 0; they are not deleted.
 */
export const deviceCounts = sqliteTable(
  "device_counts",
  {
    organizationId: text("organization_id").notNull(),
    status: text("status", { enum: DEVICE_STATUSES }).notNull(),
    platform: text("platform", { enum: PLATFORMS }).notNull(),
    complianceStatus: text("compliance_status", { enum: COMPLIANCE_STATUSES }).notNull(),
    count: integer("count").notNull(),
  },
  (table) => [
    primaryKey({
      columns: [table.organizationId, table.status, table.platform, table.complianceStatus],
    }),
  ],
);

/**
 * The anchors of an organization's unfiltered device list (src/db/device-page-anchors.ts), kept so that a
 * restarted server pages deep at once instead of walking a large fleet's index again: valid while
 * organizations.device_list_version still equals `list_version`. `keys` holds the sort key ({enrolledAt,
 * id}) of every ANCHOR_SPACING-th device, from the head of the list when they were found.
 */
export const deviceListAnchors = sqliteTable("device_list_anchors", {
  organizationId: text("organization_id").primaryKey(),
  listVersion: integer("list_version").notNull(),
  keys: text("keys", { mode: "json" }).$type<{ enrolledAt: string; id: string }[]>().notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Agent credentials; kept as SHA-256 hashes. */
export const deviceTokens = sqliteTable(
  "device_tokens",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    uniqueIndex("device_tokens_hash_unique").on(table.tokenHash),
    index("device_tokens_device_idx").on(table.deviceId),
  ],
);

/**
 * A phone managed only through the VPN profile (iOS) or QR code (Android) it installs: no agent runs on
 * it. When the server made its WireGuard key, the private half is kept sealed (`<database>.key`) only
 * until the phone has fetched its profile or `key_held_until` passes, whichever comes first, and then
 * erased; a key the phone made never reaches the server.
 */
export const phoneEnrollments = sqliteTable(
  "phone_enrollments",
  {
    deviceId: text("device_id")
      .primaryKey()
      .references(() => devices.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    keyMadeBy: text("key_made_by", { enum: PHONE_KEY_SOURCES }).notNull(),
    sealedPrivateKey: text("sealed_private_key"),
    keyHeldUntil: text("key_held_until"),
    /** When the phone last fetched its profile through a one-time link. */
    profileFetchedAt: text("profile_fetched_at"),
    /** The policy version and payload types of the profile it fetched then: what it holds. */
    deliveredPolicyId: text("delivered_policy_id"),
    deliveredPolicyVersion: integer("delivered_policy_version"),
    deliveredPayloads: text("delivered_payloads", { mode: "json" }).$type<
      { type: string; description: string }[]
    >(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("phone_enrollments_key_held_idx").on(table.keyHeldUntil)],
);

/** One-time links a phone's camera opens to fetch its profile; kept as SHA-256 hashes. */
export const phoneProfileLinks = sqliteTable(
  "phone_profile_links",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    tokenHash: text("token_hash").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    uniqueIndex("phone_profile_links_hash_unique").on(table.tokenHash),
    index("phone_profile_links_device_idx").on(table.deviceId),
  ],
);

export const deviceLogs = sqliteTable(
  "device_logs",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    index("device_logs_device_idx").on(table.deviceId, table.createdAt),
    index("device_logs_device_event_idx").on(table.deviceId, table.event, table.createdAt),
    // For the retention purge.
    index("device_logs_created_idx").on(table.createdAt),
  ],
);

export const wipes = sqliteTable(
  "wipes",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    status: text("status", { enum: WIPE_STATUSES }).notNull(),
    reason: text("reason").notNull(),
    notifyUser: integer("notify_user", { mode: "boolean" }).notNull(),
    initiatedBy: text("initiated_by").notNull(),
    initiatedAt: text("initiated_at").notNull(),
    completedAt: text("completed_at"),
    error: text("error"),
    /** What the agent reported it erased and whom it notified (WipeReport); null when it sent none. */
    report: text("report", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (table) => [
    // A device's pending wipes, oldest first (check-in, wipe request); also serves deletes by device.
    index("wipes_device_status_idx").on(table.deviceId, table.status, table.initiatedAt),
    // A device's newest wipe, read from the index end (the device page): no sort on every device read.
    index("wipes_device_initiated_idx").on(table.deviceId, table.initiatedAt),
    // Pending wipes past their timeout, across devices (the time-out job).
    index("wipes_status_idx").on(table.status, table.initiatedAt),
  ],
);
