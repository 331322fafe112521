import { type Static, Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { DevicePrincipal } from "../../domain/devices/authenticate-device";
import { completeWipe } from "../../domain/devices/complete-wipe";
import { ValidationError } from "../../domain/errors";
import { deviceCaCertificatePem } from "../../domain/pki/device-ca";
import { renewDeviceCertificate } from "../../domain/pki/renew-device-certificate";
import type { AppDeps } from "../app-deps";
import { jsonAnswer } from "../json-answer";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses, Uuid } from "../schemas/common";
import { CheckInBody, CheckInResponse, CompleteWipeBody, WipeIdParams } from "./agent.schemas";
import { WipeSchema } from "./devices.schemas";
import { RenewCertificateBody, RenewedCertificateSchema } from "./vpn.schemas";

/**
 * Elysia turns a JSON body that is not an object (`[]`, `5`) into `{}` when every field is optional, so
 * the check-in looks at the parsed body first. Unauthenticated requests are left to the 401.
 */
function refuseNonObjectBody({ body, request }: { body: unknown; request: Request }): void {
  const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
  if (!isObject && requestState(request).device !== null) {
    throw new ValidationError("invalid request body", [
      { field: "body", message: "must be a JSON object", received: body },
    ]);
  }
}

/**
 * The organization whose device CA ca.pem serves: the caller's (a device, user or API key credential),
 * else the `organization_id` asked for; 400 naming it when there is neither.
 */
function caOrganizationId(request: Request, organizationId: string | undefined): string {
  const state = requestState(request);
  const callerOrganization = state.device?.organizationId ?? state.principal?.organizationId;
  if (callerOrganization) return callerOrganization;
  if (state.authError) throw state.authError;
  if (organizationId) return organizationId.toLowerCase();
  throw new ValidationError("invalid query", [
    {
      field: "organization_id",
      message: "is required without a credential (or send the device token or certificate)",
    },
  ]);
}

/**
 * A device's check-in of `body`, answered once committed; the route and the fast lane (fast-lane.ts)
 * both answer through it. `headers` are the request's gathered headers, for an answer made outside
 * Elysia. Not checked against CheckInResponse on every answer: see jsonAnswer.
 */
export async function answerCheckIn(
  deps: AppDeps,
  device: DevicePrincipal,
  body: Static<typeof CheckInBody>,
  headers?: Record<string, string>,
): Promise<Response> {
  const result = await deps.checkIns.checkIn(device, {
    agentVersion: body.agent_version,
    osVersion: body.os_version,
    policyId: body.policy_id,
    policyVersion: body.policy_version,
    facts: body.facts,
  });
  deps.metrics.countCheckIn(result.compliance.status);
  return jsonAnswer(result, headers);
}

/** /api/v1/agent: the endpoints device agents call with their device token or device certificate. */
export function agentRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/agent", tags: ["Agent"] })
    .use(security)
    .get(
      "/ca.pem",
      async ({ query, request }) =>
        new Response(await deviceCaCertificatePem(deps, caOrganizationId(request, query.organization_id)), {
          headers: { "content-type": "application/x-pem-file" },
        }),
      {
        query: Type.Object({ organization_id: Type.Optional(Uuid) }),
        response: {
          200: Type.String({ description: "The device CA's certificate (PEM)" }),
          ...errorResponses(400, 401, 404, 429),
        },
        detail: {
          summary: "The organization's device CA certificate",
          description:
            "The CA (ECDSA P-256) that signs the organization's device certificates: give it to " +
            "`openssl verify -CAfile`, or to a reverse proxy that checks client certificates. The " +
            "organization is the caller's when a device token, device certificate, session or API key " +
            "comes along; without one, ?organization_id= names it (a CA certificate is public). " +
            "Created on first use.",
          security: [],
        },
      },
    )
    .post(
      "/certificate",
      ({ body, device, actor }) => renewDeviceCertificate(deps, device, actor, body.csr),
      {
        device: true,
        body: RenewCertificateBody,
        response: { 200: RenewedCertificateSchema, ...errorResponses(400, 401, 409, 429) },
        detail: {
          summary: "Renew the device certificate",
          description:
            "Authorization: Bearer <device_token>, or the current device certificate. Signs a new " +
            "certificate (one year, CN = device id) for the key in the CSR and revokes every earlier " +
            "one in the same transaction: use the new one from now on. 400: a CSR that is not PKCS#10 " +
            "PEM, not ECDSA P-256 or RSA 2048+, or whose signature does not verify. 409 " +
            "device_suspended: a suspended device gets no certificate (suspension revoked its own); " +
            "renew with the device token once unsuspended. Renew a month before certificate_expires_at.",
        },
      },
    )
    .post("/checkin", ({ body, device }) => answerCheckIn(deps, device, body), {
      device: true,
      transform: refuseNonObjectBody,
      body: CheckInBody,
      response: { 200: CheckInResponse, ...errorResponses(400, 401, 429, 503) },
      detail: {
        summary: "Check in",
        description:
          "Authorization: Bearer <device_token>, or the device certificate (in Bulwark's TLS " +
          "handshake, or a trusted proxy's Client-Cert header). Updates last_seen (an offline device " +
          "comes back online; a suspended one stays suspended), stores the reported versions and " +
          "facts, re-evaluates compliance, logs device.checkin when the report changed or once per " +
          "devices.checkin_log_interval_seconds (default an hour) otherwise, and logs policy.applied " +
          "once per policy version the agent reports. The answer comes once the check-in is " +
          "committed (check-ins arriving together share one transaction); 503 database_unavailable " +
          "when it could not be saved: check in again. Returns the current policy, pending wipe commands and " +
          "the VPN peer settings (vpn_config: rewrite the tunnel when they changed).",
      },
    })
    .post(
      "/wipes/:wipe_id/complete",
      ({ params, body, device, actor }) =>
        completeWipe(deps, device, actor, params.wipe_id, { success: body.success, error: body.error }),
      {
        device: true,
        params: WipeIdParams,
        body: CompleteWipeBody,
        response: { 200: WipeSchema, ...errorResponses(400, 401, 404, 409, 429) },
        detail: {
          summary: "Report the outcome of a wipe command",
          description:
            "success: the wipe is completed, the device wiped, its device token and certificates revoked. Failure: " +
            "the wipe is failed and the device keeps its status. 409 unless the wipe is pending.",
        },
      },
    );
}
