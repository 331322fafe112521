import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { DEVICE_STATUSES, GDPR_REQUEST_STATUSES, GDPR_REQUEST_TYPES, PLATFORMS } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { ComplianceStatusSchema, MissingRulesSchema, ViolationSchema } from "../devices/evaluate-compliance";
import type { EventType } from "./event-types";

/**
 * The `data` of every event: one schema per event type, which types `recordEvent`'s argument (a
 * payload that differs from its schema does not compile) and documents the webhook in OpenAPI.
 */
const Id = Type.String({ format: "uuid" });
const Timestamp = Type.String({ format: "date-time" });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const FieldChange = Type.Object({ from: Nullable(Type.String()), to: Nullable(Type.String()) });

const DeviceFields = {
  device_id: Id,
  device_name: Type.String(),
  platform: literalUnion(PLATFORMS),
};

const deviceEvent = <P extends Record<string, TSchema>>(title: string, description: string, properties: P) =>
  Type.Object({ ...DeviceFields, ...properties }, { title, description });

export const EVENT_DATA_SCHEMAS = {
  "device.enrolled": deviceEvent(
    "DeviceEnrolledData",
    "A device enrolled with an enrollment token, or an administrator added a phone (VPN profile only)",
    { user_id: Nullable(Id), policy_id: Id },
  ),
  "device.suspended": deviceEvent("DeviceSuspendedData", "A device was suspended", { reason: Type.String() }),
  "device.unsuspended": deviceEvent("DeviceUnsuspendedData", "A suspended device was released", {
    status: Type.String({
      description: "online or offline, by its last check-in; pending for a phone without an agent",
    }),
    previous_reason: Nullable(Type.String()),
  }),
  "device.wipe_requested": deviceEvent("DeviceWipeRequestedData", "A wipe was requested", {
    wipe_id: Id,
    reason: Type.String(),
    notify_user: Type.Boolean(),
  }),
  "device.wiped": deviceEvent("DeviceWipedData", "The agent confirmed a wipe", {
    wipe_id: Id,
    completed_at: Timestamp,
  }),
  "device.deleted": deviceEvent("DeviceDeletedData", "A wiped device was deleted", {}),
  "device.retired": deviceEvent(
    "DeviceRetiredData",
    "A device that was not wiped was removed (lost, stolen, destroyed): its credentials and VPN peer are gone",
    {
      reason: Type.String(),
      previous_status: literalUnion(DEVICE_STATUSES),
      cancelled_wipe_id: Nullable(Id),
    },
  ),
  "device.unenrolled": deviceEvent(
    "DeviceUnenrolledData",
    "A device left the server on its own (its agent unenrolled it): its credentials and VPN peer are gone",
    { previous_status: literalUnion(DEVICE_STATUSES) },
  ),
  "device.updated": deviceEvent("DeviceUpdatedData", "A device was renamed or given to another user", {
    changes: Type.Object(
      {
        device_name: Type.Optional(FieldChange),
        user_id: Type.Optional(FieldChange),
      },
      { description: "Only the fields that changed, each with its value before and after" },
    ),
  }),
  "device.offline": deviceEvent("DeviceOfflineData", "A device stopped checking in", {
    last_seen: Timestamp,
  }),
  "device.compliance_changed": deviceEvent("DeviceComplianceChangedData", "A device's compliance changed", {
    previous_status: ComplianceStatusSchema,
    status: ComplianceStatusSchema,
    previous_violations: Type.Array(ViolationSchema, {
      description: "The violations before: a device can stay non_compliant for other reasons",
    }),
    policy_id: Id,
    policy_version: Type.Integer(),
    violations: Type.Array(ViolationSchema),
    missing: MissingRulesSchema,
  }),
  "policy.created": Type.Object(
    {
      policy_id: Id,
      name: Type.String(),
      version: Type.Integer(),
      template_id: Type.Optional(Type.String({ description: "When created from a template" })),
    },
    { title: "PolicyCreatedData", description: "A policy was created" },
  ),
  "policy.updated": Type.Object(
    {
      policy_id: Id,
      name: Type.String(),
      version: Type.Integer(),
      changes: Type.Array(Type.String(), { description: "Human-readable: path and old -> new value" }),
    },
    { title: "PolicyUpdatedData", description: "A policy got a new version" },
  ),
  "policy.deleted": Type.Object(
    {
      policy_id: Id,
      name: Type.String(),
      affected_devices: Type.Integer({ description: "Devices that fell back to the default policy" }),
      fallback_policy: Nullable(Id),
    },
    { title: "PolicyDeletedData", description: "A policy was deleted" },
  ),
  "policy.assigned": Type.Union(
    [
      deviceEvent("DevicePolicyAssignedData", "A device was given a policy (or back to the default)", {
        policy_id: Id,
        policy_name: Type.String(),
        previous_policy_id: Nullable(Id),
        follows_default: Type.Boolean(),
      }),
      Type.Object(
        {
          policy_id: Id,
          name: Type.String(),
          scope: Type.Literal("organization_default"),
          previous_policy_id: Nullable(Id),
        },
        { title: "DefaultPolicyAssignedData", description: "The organization got another default policy" },
      ),
    ],
    {
      title: "PolicyAssignedData",
      description: "A device, or the organization as its default, got a policy",
    },
  ),
  "webhook.test": Type.Object(
    { webhook_id: Id, message: Type.String() },
    { title: "WebhookTestData", description: "Sent by POST /webhooks/:id/test" },
  ),
  "gdpr.request_completed": Type.Object(
    {
      request_id: Id,
      type: literalUnion(GDPR_REQUEST_TYPES),
      status: literalUnion(GDPR_REQUEST_STATUSES, {
        description: "completed, needs_review (an operator has to act) or rejected",
      }),
      user_id: Type.String({ format: "uuid", description: "The person the request is about" }),
      processing: Nullable(Type.String({ description: "Objections: the processing objected to" })),
      completed_at: Timestamp,
    },
    {
      title: "GdprRequestCompletedData",
      description:
        "A data-protection request (export, erasure, restriction, objection) was answered; no personal data, fetch it with GET /gdpr/requests",
    },
  ),
} satisfies Record<EventType, TSchema>;

/** The `data` of an event of type `T`. */
export type EventData<T extends EventType> = Static<(typeof EVENT_DATA_SCHEMAS)[T]>;
