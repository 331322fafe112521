import { type Static, Type } from "@sinclair/typebox";
import { and, asc, eq, inArray, or } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { SIGN_IN_METHODS, SSO_PROVIDERS } from "../../db/schema/enums";
import {
  apiKeys,
  auditLogs,
  deviceLogs,
  devices,
  enrollmentTokens,
  mfaMethods,
  organizations,
  recoveryCodes,
  sessions,
  ssoIdentities,
} from "../../db/tables";
import { formatIpv4 } from "../../lib/ipv4";
import { literalUnion } from "../../lib/literal-union";
import { NullableTimestamp, Timestamp, Uuid } from "../../lib/schema-types";
import { AuditLogSchema, toAuditLogView } from "../audit/list-audit-logs";
import { ApiKeySchema, toApiKeyView } from "../auth/api-keys";
import type { Principal } from "../auth/principal";
import { RoleSchema } from "../auth/scopes";
import type { Actor, DomainDeps } from "../deps";
import { DeviceStatusSchema, PlatformSchema } from "../devices/device-views";
import { EnrollmentTokenSchema, toView as toEnrollmentTokenView } from "../devices/enrollment-token-view";
import { ComplianceStatusSchema } from "../devices/evaluate-compliance";
import { DeviceLogSchema } from "../devices/list-device-logs";
import { MfaMethodTypeSchema } from "../mfa/mfa-view";
import { toUserView, UserSchema } from "../users/user-view";
import { GdprRequestSchema, gdprRequestsAbout, recordGdprRequest } from "./gdpr-request";
import { findGdprSubject, gdprSubjectId } from "./gdpr-subject";

export const EXPORT_FORMAT = "bulwark.personal-data.v1";

const ExportedDevice = Type.Object(
  {
    id: Uuid,
    device_name: Type.String(),
    platform: PlatformSchema,
    status: DeviceStatusSchema,
    agent_version: Type.String(),
    os_version: Type.Union([Type.String(), Type.Null()]),
    hardware_id: Type.String(),
    vpn_ip: Type.Union([Type.String(), Type.Null()]),
    facts: Type.Union([Type.Record(Type.String(), Type.Boolean()), Type.Null()], {
      description: "What the agent last reported about the device's security settings",
    }),
    compliance_status: ComplianceStatusSchema,
    last_seen: Timestamp,
    enrolled_at: Timestamp,
    logs: Type.Array(DeviceLogSchema, { description: "The device's whole activity log, oldest first" }),
  },
  { title: "ExportedDevice" },
);

/** The personal data export: everything Bulwark holds about one person, secrets excepted. */
export const PersonalDataExportSchema = Type.Object(
  {
    format: Type.Literal(EXPORT_FORMAT, { description: "The document's format and version" }),
    generated_at: Timestamp,
    request_id: Type.String({ format: "uuid", description: "The export's data-protection request" }),
    profile: Type.Object(
      {
        ...UserSchema.properties,
        deleted_at: Type.Union([Timestamp, Type.Null()], {
          description: "When the account was deleted; its email then is `former_email`",
        }),
        former_email: Type.Union([Type.String(), Type.Null()], {
          description: "A deleted account's email before deletion, when known",
        }),
        device_activity_objected_at: Type.Union([Timestamp, Type.Null()], {
          description: "Since when the person objects to the processing of their devices' activity",
        }),
      },
      { description: "The account" },
    ),
    organization: Type.Object(
      { id: Uuid, name: Type.String(), role: RoleSchema },
      { description: "The organization the person belongs to, and their role in it" },
    ),
    devices: Type.Array(ExportedDevice, { description: "Devices assigned to the person, with their logs" }),
    api_keys: Type.Array(ApiKeySchema, { description: "API keys they created (never the key or its hash)" }),
    enrollment_tokens: Type.Array(EnrollmentTokenSchema, {
      description: "Enrollment tokens they created, or that enroll devices for them (never the token)",
    }),
    mfa_methods: Type.Array(
      Type.Object({
        id: Uuid,
        type: MfaMethodTypeSchema,
        name: Type.String(),
        confirmed: Type.Boolean(),
        created_at: Timestamp,
        last_used_at: NullableTimestamp,
      }),
      { description: "Second factors (never a TOTP secret or a passkey's key)" },
    ),
    recovery_codes: Type.Object(
      { total: Type.Integer(), unused: Type.Integer() },
      { description: "How many recovery codes they have (the codes are never stored readably)" },
    ),
    sso_identities: Type.Array(
      Type.Object({
        provider: literalUnion(SSO_PROVIDERS),
        issuer: Type.String(),
        subject: Type.String({ description: "The identity provider's id for the person" }),
        created_at: Timestamp,
        last_sign_in_at: Timestamp,
      }),
      { description: "Identity-provider accounts linked to theirs" },
    ),
    sessions: Type.Array(
      Type.Object({
        id: Uuid,
        sign_in_method: literalUnion(SIGN_IN_METHODS),
        ip: Type.Union([Type.String(), Type.Null()]),
        created_at: Timestamp,
        expires_at: Timestamp,
        revoked_at: NullableTimestamp,
        revoked_reason: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: "Sign-in sessions still on record (never a token)" },
    ),
    audit_entries: Type.Array(AuditLogSchema, {
      description:
        "Audit entries where they (or one of their API keys) are the actor or they are the target, oldest first",
    }),
    data_protection_requests: Type.Array(GdprRequestSchema, {
      description: "Their data-protection requests, this export included",
    }),
  },
  { title: "PersonalDataExport" },
);

export type PersonalDataExport = Static<typeof PersonalDataExportSchema>;

/**
 * Exports everything held about the caller (or, for an admin, `userId` of the organization, a deleted
 * account included), and records the request. One transaction, so the document is one consistent view.
 */
export async function exportPersonalData(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string | undefined,
): Promise<PersonalDataExport> {
  const subjectId = gdprSubjectId(principal, userId);
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const { row, email } = await findGdprSubject(tx, organizationId, subjectId, {
      allowClosed: subjectId !== principal.userId,
    });
    const request = await recordGdprRequest(tx, now, actor, {
      organizationId,
      userId: row.id,
      type: "export",
      status: "completed",
      result: "exported",
    });
    const organization = await firstRow(
      tx
        .select({ id: organizations.id, name: organizations.name })
        .from(organizations)
        .where(eq(organizations.id, organizationId)),
    );
    const keys = await tx
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.userId, row.id))
      .orderBy(asc(apiKeys.createdAt));
    const actorIds = [row.id, ...keys.map((key) => key.id)];
    const assigned = await tx
      .select()
      .from(devices)
      .where(and(eq(devices.organizationId, organizationId), eq(devices.userId, row.id)))
      .orderBy(asc(devices.enrolledAt));
    const codes = await tx
      .select({ usedAt: recoveryCodes.usedAt })
      .from(recoveryCodes)
      .where(eq(recoveryCodes.userId, row.id));
    return {
      format: EXPORT_FORMAT,
      generated_at: request.completed_at,
      request_id: request.id,
      profile: {
        ...toUserView(row),
        deleted_at: row.deletedAt,
        former_email: row.deletedAt ? email : null,
        device_activity_objected_at: row.deviceActivityObjectedAt,
      },
      organization: { id: organizationId, name: organization?.name ?? "", role: row.role },
      devices: await Promise.all(
        assigned.map(async (device) => ({
          id: device.id,
          device_name: device.deviceName,
          platform: device.platform,
          status: device.status,
          agent_version: device.agentVersion,
          os_version: device.osVersion,
          hardware_id: device.hardwareId,
          vpn_ip: device.vpnAddress === null ? null : formatIpv4(device.vpnAddress),
          facts: device.facts,
          compliance_status: device.complianceStatus,
          last_seen: device.lastSeen,
          enrolled_at: device.enrolledAt,
          logs: (
            await tx
              .select()
              .from(deviceLogs)
              .where(eq(deviceLogs.deviceId, device.id))
              .orderBy(asc(deviceLogs.createdAt))
          ).map((log) => ({ timestamp: log.createdAt, event: log.event, details: log.details })),
        })),
      ),
      api_keys: keys.map(toApiKeyView),
      enrollment_tokens: (
        await tx
          .select()
          .from(enrollmentTokens)
          .where(
            and(
              eq(enrollmentTokens.organizationId, organizationId),
              or(eq(enrollmentTokens.createdByUserId, row.id), eq(enrollmentTokens.userId, row.id)),
            ),
          )
          .orderBy(asc(enrollmentTokens.createdAt))
      ).map((token) => toEnrollmentTokenView(token, now)),
      mfa_methods: (
        await tx
          .select()
          .from(mfaMethods)
          .where(eq(mfaMethods.userId, row.id))
          .orderBy(asc(mfaMethods.createdAt))
      ).map((method) => ({
        id: method.id,
        type: method.type,
        name: method.name,
        confirmed: method.confirmedAt !== null,
        created_at: method.createdAt,
        last_used_at: method.lastUsedAt,
      })),
      recovery_codes: { total: codes.length, unused: codes.filter((code) => code.usedAt === null).length },
      sso_identities: (
        await tx
          .select()
          .from(ssoIdentities)
          .where(eq(ssoIdentities.userId, row.id))
          .orderBy(asc(ssoIdentities.createdAt))
      ).map((identity) => ({
        provider: identity.provider,
        issuer: identity.issuer,
        subject: identity.subject,
        created_at: identity.createdAt,
        last_sign_in_at: identity.lastSignInAt,
      })),
      sessions: (
        await tx.select().from(sessions).where(eq(sessions.userId, row.id)).orderBy(asc(sessions.createdAt))
      ).map((session) => ({
        id: session.id,
        sign_in_method: session.signInMethod,
        ip: session.ip,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
        revoked_at: session.revokedAt,
        revoked_reason: session.revokedReason,
      })),
      audit_entries: await auditEntriesByOrAbout(tx, organizationId, actorIds, row.id),
      data_protection_requests: await gdprRequestsAbout(tx, organizationId, row.id),
    };
  });
}

/**
 * Audit entries by the person (or one of their keys) or about them, oldest first: two indexed lookups
 * (by actor, by target), since an OR of the two would read the organization's whole trail.
 */
async function auditEntriesByOrAbout(tx: Tx, organizationId: string, actorIds: string[], userId: string) {
  const inOrganization = eq(auditLogs.organizationId, organizationId);
  const byThem = await tx
    .select()
    .from(auditLogs)
    .where(and(inOrganization, inArray(auditLogs.actorId, actorIds)));
  const aboutThem = await tx
    .select()
    .from(auditLogs)
    .where(and(inOrganization, eq(auditLogs.targetId, userId), eq(auditLogs.targetType, "user")));
  const entries = new Map([...byThem, ...aboutThem].map((entry) => [entry.id, entry]));
  return [...entries.values()]
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    .map(toAuditLogView);
}
