import { Elysia } from "elysia";
import { checkInDevice } from "../../domain/devices/check-in-device";
import { completeWipe } from "../../domain/devices/complete-wipe";
import { ValidationError } from "../../domain/errors";
import type { AppDeps } from "../app-deps";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { CheckInBody, CheckInResponse, CompleteWipeBody, WipeIdParams } from "./agent.schemas";
import { WipeSchema } from "./devices.schemas";

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

/** /api/v1/agent: the endpoints device agents call with their device token. */
export function agentRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/agent", tags: ["Agent"] })
    .use(security)
    .post(
      "/checkin",
      ({ body, device }) =>
        checkInDevice(deps, device, {
          agentVersion: body.agent_version,
          osVersion: body.os_version,
          policyId: body.policy_id,
          policyVersion: body.policy_version,
          facts: body.facts,
        }),
      {
        device: true,
        transform: refuseNonObjectBody,
        body: CheckInBody,
        response: { 200: CheckInResponse, ...errorResponses(400, 401, 429) },
        detail: {
          summary: "Check in",
          description:
            "Authorization: Bearer <device_token>. Updates last_seen (an offline device comes back " +
            "online; a suspended one stays suspended), stores the reported versions and facts, " +
            "re-evaluates compliance, logs device.checkin, and logs policy.applied once per policy " +
            "version the agent reports. Returns the current policy and pending wipe commands.",
        },
      },
    )
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
            "success: the wipe is completed, the device wiped and its device token revoked. Failure: " +
            "the wipe is failed and the device keeps its status. 409 unless the wipe is pending.",
        },
      },
    );
}
