import { type Static, Type } from "@sinclair/typebox";
import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { DEVICE_STATUSES, PLATFORMS } from "../../db/schema/enums";
import { devices } from "../../db/tables";
import { formatIpv4 } from "../../lib/ipv4";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { NotFoundError } from "../errors";
import { EnforcementEntrySchema, IgnoredFactValueSchema } from "./device-report";
import type { ComplianceReport, Violation } from "./evaluate-compliance";
import { ComplianceReportSchema, ComplianceStatusSchema, DeviceFactsSchema } from "./evaluate-compliance";
import { WipeSchema, type WipeView } from "./wipe-view";

/** A stored device. */
export type DeviceRow = typeof devices.$inferSelect;

/** A device's lifecycle status. */
export type DeviceStatus = DeviceRow["status"];

export const PlatformSchema = literalUnion(PLATFORMS, {
  title: "Platform",
  description: "linux, windows, macos, android or ios",
});

export const DeviceStatusSchema = literalUnion(DEVICE_STATUSES, {
  title: "DeviceStatus",
  description:
    "online: checked in recently; offline: no check-in for devices.offline_after_seconds; suspended: " +
    "disabled by an administrator; wiped: work profile wiped; pending: enrollment in progress",
});

/** One row of the device list (id, name, platform, status and last seen, plus the compliance status). */
export const DeviceListItemSchema = Type.Object(
  {
    id: Uuid,
    device_name: Type.String(),
    platform: PlatformSchema,
    status: DeviceStatusSchema,
    last_seen: Timestamp,
    enrolled_at: Timestamp,
    compliance_status: ComplianceStatusSchema,
  },
  { title: "DeviceListItem" },
);

/** The single-device response: every field of the `Device` component, the suspension reason and the compliance report. */
export const DeviceSchema = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    user_id: Type.Union([Uuid, Type.Null()], { description: "The user the device belongs to, if any" }),
    device_name: Type.String(),
    platform: PlatformSchema,
    agent_version: Type.String(),
    os_version: Type.Union([Type.String(), Type.Null()], { description: "As last reported by the agent" }),
    hardware_id: Type.String(),
    status: DeviceStatusSchema,
    suspended_reason: Type.Union([Type.String(), Type.Null()]),
    last_seen: Timestamp,
    enrolled_at: Timestamp,
    policy_id: Type.String({ description: "The effective policy: the assigned one, else the default" }),
    vpn_ip: Type.Union([Type.String(), Type.Null()], { description: "IPv4 address in the VPN" }),
    vpn_public_key: Type.String({ description: "The device's WireGuard public key" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    compliance: ComplianceReportSchema,
    // Own names, as for latest_wipe below: a nullable field's schema must not make the component nullable.
    facts: Type.Union(
      [
        Type.Object(DeviceFactsSchema.properties, { title: "DeviceLastFacts", additionalProperties: false }),
        Type.Null(),
      ],
      { description: "The facts of the agent's last report that this server judges; null before any" },
    ),
    ignored_facts: Type.Union([Type.Record(Type.String(), IgnoredFactValueSchema), Type.Null()], {
      description:
        "The facts of the last report this server does not know (a newer agent's, or a misspelled name), " +
        "as reported; not judged. null when there were none",
    }),
    enforcement: Type.Union(
      [
        Type.Object(
          {
            reported_at: Timestamp,
            settings: Type.Array(EnforcementEntrySchema, {
              description: "Each setting the agent applies, with what came of it",
            }),
          },
          { title: "DeviceEnforcement" },
        ),
        Type.Null(),
      ],
      { description: "The agent's last enforcement report and when it came; null before any" },
    ),
    certificate: Type.Union(
      [
        Type.Object(
          {
            serial: Type.String({ description: "Hexadecimal, as `openssl x509 -serial` prints it" }),
            issued_at: Timestamp,
            expires_at: Timestamp,
            revoked: Type.Boolean({ description: "Revoked by renewal, suspension or wipe" }),
            revoked_at: Type.Union([Timestamp, Type.Null()]),
          },
          { title: "DeviceCertificate" },
        ),
        Type.Null(),
      ],
      { description: "The device's newest client certificate; null when it never sent a CSR" },
    ),
    vpn_profile: Type.Union(
      [
        Type.Object(
          {
            key_made_by: Type.Union([Type.Literal("server"), Type.Literal("phone")], {
              description:
                "Who made the WireGuard key pair: the server (its private key sealed until the phone fetches its profile, a day at most) or the phone's WireGuard app (the private key never leaves the phone: safer)",
            }),
            key_held_until: Type.Union([Timestamp, Type.Null()], {
              description:
                "Until when the server still holds the private key it made; null when it holds none (the phone made it, fetched its profile, or the day passed)",
            }),
            profile_fetched_at: Type.Union([Timestamp, Type.Null()], {
              description: "When the phone fetched its profile through a one-time link (iOS)",
            }),
            profile_payloads: Type.Array(
              Type.Object(
                { type: Type.String(), description: Type.String() },
                { title: "PhoneProfilePayload" },
              ),
              {
                description:
                  "What the phone's configuration profile carries under the current policy (iOS; empty for Android)",
              },
            ),
            delivered: Type.Union(
              [
                Type.Object(
                  {
                    policy_id: Uuid,
                    policy_version: Type.Integer(),
                    payloads: Type.Array(
                      Type.Object(
                        { type: Type.String(), description: Type.String() },
                        { title: "PhoneDeliveredPayload" },
                      ),
                    ),
                  },
                  { title: "PhoneDeliveredProfile" },
                ),
                Type.Null(),
              ],
              {
                description:
                  "What the profile the phone fetched carried, and under which policy version (iOS); null before it fetched one",
              },
            ),
            profile_out_of_date: Type.Boolean({
              description:
                "The fetched profile carries other settings than the policy now asks for: send a new one (a new key, POST /devices/:id/vpn-key)",
            }),
          },
          { title: "DeviceVpnProfile" },
        ),
        Type.Null(),
      ],
      {
        description:
          "Set for a phone added with POST /devices/phones: VPN profile only, no agent. Nothing on it reports: its status is pending until the VPN host sees its handshake (bulwark vpn sync with vpn:report), and its compliance stays unknown; null for a device with an agent",
      },
    ),
    // Its own name: the document makes a nullable field's schema nullable, which must not reach Wipe.
    latest_wipe: Type.Union(
      [Type.Object(WipeSchema.properties, { title: "DeviceLatestWipe" }), Type.Null()],
      {
        description:
          "The newest wipe request, pending or finished (follow it at GET /devices/:id/wipe/:wipe_id); null when none",
      },
    ),
  },
  { title: "Device" },
);

export type DeviceListItem = Static<typeof DeviceListItemSchema>;
export type DeviceView = Static<typeof DeviceSchema>;

/** The fields every device event's data starts with (event-payloads.ts). */
export interface DeviceEventData {
  device_id: string;
  device_name: string;
  platform: DeviceRow["platform"];
}

/**
 * Finds a device of the organization; another organization's device is not found. Ids are lowercase
 * UUIDs, so an id written in uppercase finds the same device.
 */
export async function findDevice(db: DbOrTx, organizationId: string, id: string): Promise<DeviceRow> {
  const row = await firstRow(
    db
      .select()
      .from(devices)
      .where(and(eq(devices.id, id.toLowerCase()), eq(devices.organizationId, organizationId))),
  );
  if (!row) throw new NotFoundError("device");
  return row;
}

/** The list item of a device row. */
export function toDeviceListItem(
  row: Pick<
    DeviceRow,
    "id" | "deviceName" | "platform" | "status" | "lastSeen" | "enrolledAt" | "complianceStatus"
  >,
): DeviceListItem {
  return {
    id: row.id,
    device_name: row.deviceName,
    platform: row.platform,
    status: row.status,
    last_seen: row.lastSeen,
    enrolled_at: row.enrolledAt,
    compliance_status: row.complianceStatus,
  };
}

/** The compliance report stored on a device row. */
export function toComplianceReport(row: DeviceRow): ComplianceReport {
  return {
    status: row.complianceStatus,
    last_check: row.complianceCheckedAt,
    violations: row.complianceViolations as Violation[],
    missing: row.complianceMissing,
  };
}

/**
 * The single-device view; `effectivePolicyId` is the explicit policy or the organization default,
 * `certificate` the newest client certificate, `latestWipe` the newest wipe request.
 */
export function toDeviceView(
  row: DeviceRow,
  effectivePolicyId: string,
  certificate: DeviceView["certificate"],
  latestWipe: WipeView | null,
  vpnProfile: DeviceView["vpn_profile"] = null,
): DeviceView {
  return {
    id: row.id,
    organization_id: row.organizationId,
    user_id: row.userId,
    device_name: row.deviceName,
    platform: row.platform,
    agent_version: row.agentVersion,
    os_version: row.osVersion,
    hardware_id: row.hardwareId,
    status: row.status,
    suspended_reason: row.suspendedReason,
    last_seen: row.lastSeen,
    enrolled_at: row.enrolledAt,
    policy_id: effectivePolicyId,
    vpn_ip: row.vpnAddress === null ? null : formatIpv4(row.vpnAddress),
    vpn_public_key: row.vpnPublicKey,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    compliance: toComplianceReport(row),
    facts: row.facts,
    ignored_facts: row.ignoredFacts,
    enforcement:
      row.enforcement === null || row.enforcementReportedAt === null
        ? null
        : { reported_at: row.enforcementReportedAt, settings: row.enforcement },
    certificate,
    latest_wipe: latestWipe,
    vpn_profile: vpnProfile,
  };
}

/** device_id, device_name and platform, plus any event-specific fields. */
export function deviceEventData<Extra extends object = Record<never, never>>(
  row: DeviceRow,
  extra: Extra = {} as Extra,
): DeviceEventData & Extra {
  return { device_id: row.id, device_name: row.deviceName, platform: row.platform, ...extra };
}
