import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { assignDevicePolicy } from "../../domain/devices/assign-device-policy";
import { enrollmentRefusalReason } from "../../domain/devices/audit-enrollment-refusal";
import { bulkDeviceAction } from "../../domain/devices/bulk-device-action";
import { changeDeviceStatus } from "../../domain/devices/change-device-status";
import { deleteDevice } from "../../domain/devices/delete-device";
import { enrollDevice } from "../../domain/devices/enroll-device";
import { ComplianceReportSchema } from "../../domain/devices/evaluate-compliance";
import { getDevice, getDeviceCompliance } from "../../domain/devices/get-device";
import { getDevicePolicy } from "../../domain/devices/get-device-policy";
import { listDeviceLogs } from "../../domain/devices/list-device-logs";
import { listDevices } from "../../domain/devices/list-devices";
import {
  addPhone,
  adminPhoneProfile,
  createProfileLink,
  phoneVpnConfig,
  rotatePhoneKey,
} from "../../domain/devices/phone-enrollment";
import { retireDevice } from "../../domain/devices/retire-device";
import { summarizeDevices } from "../../domain/devices/summarize-devices";
import { updateDevice } from "../../domain/devices/update-device";
import { getDeviceWipe, requestDeviceWipe } from "../../domain/devices/wipe-device";
import type { AppDeps } from "../app-deps";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses, IdParams, Paginated, pageOf, paginate } from "../schemas/common";
import {
  AddPhoneBody,
  AssignPolicyBody,
  BulkBody,
  BulkResultSchema,
  DeviceListItemSchema,
  DeviceListQuery,
  DeviceLogQuery,
  DeviceLogSchema,
  DevicePolicySchema,
  DeviceSchema,
  DeviceSummarySchema,
  EnrollBody,
  EnrollmentResultSchema,
  PhoneEnrollmentSchema,
  PhoneVpnConfigSchema,
  ProfileLinkSchema,
  RetireBody,
  RetiredDeviceSchema,
  StatusBody,
  StatusChangeSchema,
  UpdateDeviceBody,
  VpnKeyBody,
  WipeBody,
  WipeInitiationSchema,
  WipeParams,
  WipeSchema,
} from "./devices.schemas";

/** /api/v1/devices: enrollment, and the administration of enrolled devices. */
export function deviceRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/devices", tags: ["Devices"] })
    .use(security)
    .post(
      "/enroll",
      async ({ body, request, set }) => {
        set.status = 201;
        return await enrollDevice(deps, {
          enrollmentToken: body.enrollment_token,
          deviceName: body.device_name,
          platform: body.platform,
          agentVersion: body.agent_version,
          hardwareId: body.hardware_id,
          osVersion: body.os_version,
          publicKey: body.public_key,
          csr: body.csr,
          ip: requestState(request).ip,
        }).catch((error: unknown) => {
          const reason = enrollmentRefusalReason(error);
          if (reason) deps.metrics.countEnrollmentRefusal(reason);
          throw error;
        });
      },
      {
        body: EnrollBody,
        response: { 201: EnrollmentResultSchema, ...errorResponses(400, 401, 409, 429) },
        detail: {
          security: [],
          summary: "Enroll a device",
          description:
            "Called by the agent with an enrollment token in the body (no bearer). Returns the VPN " +
            "configuration (with the wg_quick file), the assigned policy and the device token for the " +
            "agent endpoints; with a csr, also a one-year client certificate (device_certificate) that " +
            "can stand in for the device token. 400 also for a low-order public_key, and for a csr that " +
            "is not PKCS#10 PEM, not ECDSA P-256 or RSA 2048+, or not signed by its key (the token is " +
            "not used). 401: unknown, expired, revoked or used-up enrollment " +
            "token; 409: hardware_id already enrolled (and not wiped) in the organization, public_key " +
            "held by another device not wiped (`public key already in use`), or the VPN address pool is exhausted. " +
            "Each of these refusals is audited as device.enroll with outcome failure (the reason in " +
            "details.reason, the caller's address, the token by id and its organization; an unknown token's " +
            "entry has no organization) and counted in bulwark_enrollments_refused_total by reason; " +
            "the token itself is never recorded.",
        },
      },
    )
    .get(
      "",
      async ({ query, principal }) => {
        const page = pageOf(query);
        const filter = {
          status: query.status,
          platform: query.platform,
          userId: query.user_id,
          compliance: query.compliance,
          nameContains: query.q,
        };
        return paginate(await listDevices(deps, principal.organizationId, filter, page), page);
      },
      {
        access: "devices:read",
        query: DeviceListQuery,
        response: { 200: Paginated(DeviceListItemSchema), ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "List devices, newest enrolled first",
          description:
            "Every filter given must hold (status, platform, user_id, compliance, q). q finds devices by a part " +
            "of their name. compliance lists managed devices only, as GET /devices/summary counts them: a " +
            "wiped device keeps its last compliance_status but matches no compliance filter. 400 naming the " +
            "parameter for a value outside its enum or bounds.",
        },
      },
    )
    .get("/summary", async ({ principal }) => await summarizeDevices(deps, principal.organizationId), {
      access: "devices:read",
      response: { 200: DeviceSummarySchema, ...errorResponses(401, 403, 429) },
      detail: {
        summary: "Count the organization's devices by status and by compliance",
        description:
          "Every status and compliance value is listed, zeros included. by_status adds up to total (wiped devices count until deleted); by_compliance counts only managed devices and adds up to total minus by_status.wiped: a wiped device is not compliant, non-compliant or unknown any more. Retired and deleted devices are in neither.",
      },
    })
    .post(
      "/bulk",
      ({ body, principal, actor }) =>
        bulkDeviceAction(deps, actor, principal.organizationId, {
          deviceIds: body.device_ids,
          action: body.action,
          reason: body.reason,
          notifyUser: body.notify_user,
          policyId: body.policy_id,
        }),
      {
        access: "devices:write",
        body: BulkBody,
        response: { 200: BulkResultSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Apply one action to many devices",
          description:
            "Each device succeeds or fails on its own (results). 400 when reason (suspend, wipe) or " +
            "policy_id (assign_policy) is missing; 404 when policy_id names no policy.",
        },
      },
    )
    .post(
      "/phones",
      async ({ body, principal, actor, set }) => {
        const added = await addPhone(deps, actor, principal.organizationId, {
          deviceName: body.device_name,
          platform: body.platform,
          userId: body.user_id,
          policyId: body.policy_id,
          publicKey: body.public_key,
        });
        set.status = 201;
        return {
          device: await getDevice(deps, principal.organizationId, added.deviceId),
          profile_link: added.profileLink,
        };
      },
      {
        access: "devices:write",
        body: AddPhoneBody,
        response: { 201: PhoneEnrollmentSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Add a phone (VPN profile only, no agent)",
          description:
            "An iPhone or iPad (ios) gets a signed configuration profile through a one-time link " +
            "(profile_link, for the phone's camera as a QR code): the tunnel for the WireGuard app, and " +
            "the passcode and screenshot settings of its policy that a profile installed by hand can " +
            "carry. An Android phone scans its tunnel's QR code (GET /devices/:id/vpn-config) in the " +
            "WireGuard app. Without public_key the server makes the key pair and holds the private key, " +
            "sealed, until the phone fetches its profile or a day passes; with the public key the " +
            "phone's app made, the private key never leaves the phone (safer; the profile then carries " +
            "no tunnel, which the user adds in the app). The device starts pending with compliance " +
            "unknown: nothing on the phone reports. Audited as device.add_phone, sent as " +
            "device.enrolled. 404 for a user_id or policy_id not in the organization; 409 " +
            "public_key_taken, or vpn_pool_exhausted.",
        },
      },
    )
    .get("/:id", ({ params, principal }) => getDevice(deps, principal.organizationId, params.id), {
      access: "devices:read",
      params: IdParams,
      response: { 200: DeviceSchema, ...errorResponses(401, 403, 404, 429) },
      detail: { summary: "Get a device with its compliance" },
    })
    .delete(
      "/:id",
      async ({ params, principal, actor, set }) => {
        await deleteDevice(deps, actor, principal.organizationId, params.id);
        set.status = 204;
      },
      {
        access: "devices:write",
        params: IdParams,
        response: { 204: Type.Void({ description: "Deleted" }), ...errorResponses(401, 403, 404, 409, 429) },
        detail: {
          summary: "Delete a wiped device",
          description:
            "409 `device must be wiped before deletion` otherwise (reason device_not_wiped): a device " +
            "that will never confirm a wipe is removed with POST /devices/:id/retire. Frees its VPN address.",
        },
      },
    )
    .patch(
      "/:id",
      async ({ params, body, principal, actor }) => {
        await updateDevice(deps, actor, principal.organizationId, params.id, {
          deviceName: body.device_name,
          userId: body.user_id,
        });
        return getDevice(deps, principal.organizationId, params.id);
      },
      {
        access: "devices:write",
        params: IdParams,
        body: UpdateDeviceBody,
        response: { 200: DeviceSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Rename a device or give it to another user",
          description:
            "device_name and user_id (a user of the organization, or null for nobody); a field left out " +
            "keeps its value. Answers the device. Audited, logged on the device and sent as " +
            "device.updated when something changed. 400 when neither is given or the name is blank; " +
            "404 user_not_found for a user not in the organization; 409 device_wiped for a wiped device.",
        },
      },
    )
    .get(
      "/:id/vpn-config",
      ({ params, principal }) => phoneVpnConfig(deps, principal.organizationId, params.id),
      {
        access: "devices:write",
        params: IdParams,
        response: { 200: PhoneVpnConfigSchema, ...errorResponses(401, 403, 404, 409, 429, 503) },
        detail: {
          summary: "A phone's tunnel for the WireGuard app, as text and QR code",
          description:
            "For a phone added with POST /devices/phones. While the server holds the key it made, the " +
            "text and the QR code carry the private key (devices:write only). When the phone made its " +
            "key, the text says where it goes and there is no QR code. 409 device_not_vpn_profile for " +
            "a device with an agent, device_wiped, or vpn_key_not_held once the server's key was erased " +
            "(the phone fetched its profile, or a day passed): make a new one with POST /devices/:id/vpn-key.",
        },
      },
    )
    .get(
      "/:id/profile",
      async ({ params, principal, actor }) => {
        const profile = await adminPhoneProfile(deps, actor, principal.organizationId, params.id);
        return new Response(profile.body, { headers: profileHeaders(profile.fileName) });
      },
      {
        access: "devices:write",
        params: IdParams,
        response: {
          200: Type.String({
            format: "binary",
            description:
              "The signed configuration profile (application/x-apple-aspen-config: CMS SignedData, DER)",
          }),
          ...errorResponses(401, 403, 404, 409, 429, 503),
        },
        detail: {
          summary: "Download an iPhone's signed configuration profile",
          description:
            "Signed by a certificate of the organization's device CA (GET /agent/ca.pem); a phone that " +
            "trusts that CA shows it as verified. With the tunnel while the server holds the key it " +
            "made (downloading here does not erase it; only the phone's own fetch through its link " +
            "does), without it when the phone made its key. Audited (device.profile_download). 409 " +
            "profile_ios_only for Android, device_not_vpn_profile, device_wiped, vpn_key_not_held.",
        },
      },
    )
    .post(
      "/:id/profile-link",
      async ({ params, principal, actor, set }) => {
        set.status = 201;
        return await createProfileLink(deps, actor, principal.organizationId, params.id);
      },
      {
        access: "devices:write",
        params: IdParams,
        response: { 201: ProfileLinkSchema, ...errorResponses(401, 403, 404, 409, 429, 503) },
        detail: {
          summary: "A new one-time link to an iPhone's profile",
          description:
            "The earlier unused links stop working. The link lasts as long as the key it delivers is " +
            "held (a day at most). 409 as for GET /devices/:id/profile.",
        },
      },
    )
    .post(
      "/:id/vpn-key",
      async ({ params, body, principal, actor }) => {
        const rotated = await rotatePhoneKey(deps, actor, principal.organizationId, params.id, {
          publicKey: body.public_key,
        });
        return {
          device: await getDevice(deps, principal.organizationId, params.id),
          profile_link: rotated.profileLink,
        };
      },
      {
        access: "devices:write",
        params: IdParams,
        body: VpnKeyBody,
        response: { 200: PhoneEnrollmentSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Give a phone a new WireGuard key",
          description:
            "Made by the server (held for a day, as at POST /devices/phones) or the phone's own " +
            "public_key. The old key leaves the VPN's peers at once; unused profile links stop working " +
            "and an iPhone gets a new one. Audited (device.vpn_key). 409 device_not_vpn_profile, " +
            "device_wiped, public_key_taken.",
        },
      },
    )
    .post(
      "/:id/retire",
      ({ params, body, principal, actor }) =>
        retireDevice(deps, actor, principal.organizationId, params.id, { reason: body.reason }),
      {
        access: "devices:write",
        params: IdParams,
        body: RetireBody,
        response: { 200: RetiredDeviceSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Retire a device that will not confirm a wipe (lost, stolen, destroyed)",
          description:
            "Removes a device that is not wiped: its device token and certificate stop working at " +
            "once, its VPN peer and address go, a pending wipe is cancelled, and its hardware_id may " +
            "enroll again. Its record, logs and wipes go with it; the audit entry (device.retire) and " +
            "the device.retired event keep what it was. 400 for a blank reason; 409 device_wiped for a " +
            "wiped device (DELETE it).",
        },
      },
    )
    .put(
      "/:id/status",
      ({ params, body, principal, actor }) =>
        changeDeviceStatus(deps, actor, principal.organizationId, params.id, body),
      {
        access: "devices:write",
        params: IdParams,
        body: StatusBody,
        response: { 200: StatusChangeSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Suspend or unsuspend a device",
          description:
            "`suspended` needs a reason. `online` (alias `active`) unsuspends: the device becomes online " +
            "if it checked in within devices.offline_after_seconds, else offline. 409 for a wiped " +
            "device, suspending a suspended one or unsuspending one that is not suspended.",
        },
      },
    )
    .post(
      "/:id/wipe",
      async ({ params, body, principal, actor, set }) => {
        set.status = 202;
        return await requestDeviceWipe(deps, actor, principal.organizationId, params.id, {
          reason: body.reason,
          notifyUser: body.notify_user ?? true,
        });
      },
      {
        access: "devices:write",
        params: IdParams,
        body: WipeBody,
        response: { 202: WipeInitiationSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Request a remote wipe of the work profile",
          description:
            "The agent receives the command at its next check-in and confirms it; poll GET " +
            "/devices/:id/wipe/:wipe_id. 400 for a blank reason. 409 while a wipe is pending or once the device is wiped.",
        },
      },
    )
    .get(
      "/:id/wipe/:wipe_id",
      async ({ params, principal }) =>
        await getDeviceWipe(deps, principal.organizationId, params.id, params.wipe_id),
      {
        access: "devices:read",
        params: WipeParams,
        response: { 200: WipeSchema, ...errorResponses(401, 403, 404, 429) },
        detail: { summary: "Poll a wipe operation" },
      },
    )
    .get(
      "/:id/policy",
      async ({ params, principal }) => await getDevicePolicy(deps, principal.organizationId, params.id),
      {
        access: "devices:read",
        params: IdParams,
        response: { 200: DevicePolicySchema, ...errorResponses(401, 403, 404, 429) },
        detail: { summary: "The device's effective policy" },
      },
    )
    .put(
      "/:id/policy",
      ({ params, body, principal, actor }) =>
        assignDevicePolicy(deps, actor, principal.organizationId, params.id, body.policy_id),
      {
        access: "devices:write",
        params: IdParams,
        body: AssignPolicyBody,
        response: { 200: DevicePolicySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Assign a policy to a device",
          description:
            "policy_id null makes the device follow the organization default. Compliance is " +
            "re-evaluated at once; the agent receives the policy at its next check-in. 409 for a wiped device.",
        },
      },
    )
    .get(
      "/:id/compliance",
      async ({ params, principal }) => await getDeviceCompliance(deps, principal.organizationId, params.id),
      {
        access: "devices:read",
        params: IdParams,
        response: { 200: ComplianceReportSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          summary: "The device's compliance report",
          description:
            "unknown while nothing is reported or a rule the policy needs cannot be checked; `missing` names those rules.",
        },
      },
    )
    .get(
      "/:id/logs",
      async ({ params, query, principal }) => {
        const page = pageOf(query);
        const filter = { event: query.event, since: query.since, until: query.until };
        return paginate(await listDeviceLogs(deps, principal.organizationId, params.id, filter, page), page);
      },
      {
        access: "devices:read",
        params: IdParams,
        query: DeviceLogQuery,
        response: { 200: Paginated(DeviceLogSchema), ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "The device's activity log, newest first",
          description:
            "since and until are compared as instants (any offset); 400 naming them when outside the " +
            "years 0000-9999 in UTC. Entries older than devices.log_retention_days are purged.",
        },
      },
    );
}

/** How a profile is served: Safari on iOS hands this type to Settings to install. */
export function profileHeaders(fileName: string): Record<string, string> {
  return {
    "content-type": "application/x-apple-aspen-config",
    "content-disposition": `attachment; filename="${fileName}"`,
    "cache-control": "no-store",
  };
}
