import { withTransaction } from "../../db/client";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { DomainError, type Reason, ValidationError } from "../errors";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { assignDevicePolicy } from "./assign-device-policy";
import { changeDeviceStatus } from "./change-device-status";
import { requestDeviceWipe } from "./wipe-device";

/** The actions one bulk request can apply. */
export type BulkAction = "suspend" | "unsuspend" | "wipe" | "assign_policy";

/** A bulk request: the devices, the action and what the action needs. */
export interface BulkDeviceInput {
  deviceIds: string[];
  action: BulkAction;
  /** Required for suspend and wipe. */
  reason?: string;
  notifyUser?: boolean;
  /** Required for assign_policy; null makes the devices follow the organization default. */
  policyId?: string | null;
}

/** The outcome for one device. */
export interface BulkDeviceResult {
  device_id: string;
  success: boolean;
  error?: string;
  /** The stable reason of the failure, as the single-device endpoint would answer it. */
  reason?: Reason;
  /** The wipe requested for this device (action wipe), to poll like a single wipe. */
  wipe_id?: string;
}

/** The outcome of a bulk request. */
export interface BulkOutcome {
  action: BulkAction;
  results: BulkDeviceResult[];
  succeeded: number;
  failed: number;
}

/**
 * Applies one action to many devices, each in its own transaction through the single-device function,
 * so each succeeds or fails on its own (unknown and other organizations' ids fail with "device not
 * found"). A request missing what the action needs, or naming an unknown policy, fails as a whole.
 */
export async function bulkDeviceAction(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: BulkDeviceInput,
): Promise<BulkOutcome> {
  const apply = await prepareAction(deps, actor, organizationId, input);
  const results: BulkDeviceResult[] = [];
  for (const deviceId of input.deviceIds) {
    try {
      const outcome = await apply(deviceId);
      results.push({ device_id: deviceId, success: true, ...outcome });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      results.push({ device_id: deviceId, success: false, error: error.message, reason: error.reason });
    }
  }
  const succeeded = results.filter((result) => result.success).length;
  await withTransaction(
    deps.db,
    async (tx) =>
      await recordAudit(tx, deps.clock.now(), actor, {
        action: "device.bulk",
        targetType: "device",
        details: {
          action: input.action,
          device_count: results.length,
          succeeded,
          failed: results.length - succeeded,
        },
      }),
  );
  return { action: input.action, results, succeeded, failed: results.length - succeeded };
}

/** Checks what the action needs, once for the whole request, and returns the per-device step. */
async function prepareAction(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: BulkDeviceInput,
): Promise<(deviceId: string) => Promise<{ wipe_id?: string }>> {
  switch (input.action) {
    case "suspend": {
      const reason = requireReason(input);
      return async (deviceId) => {
        await changeDeviceStatus(deps, actor, organizationId, deviceId, { status: "suspended", reason });
        return {};
      };
    }
    case "unsuspend":
      return async (deviceId) => {
        await changeDeviceStatus(deps, actor, organizationId, deviceId, { status: "online" });
        return {};
      };
    case "wipe": {
      const wipe = { reason: requireReason(input), notifyUser: input.notifyUser ?? true };
      return async (deviceId) => ({
        wipe_id: (await requestDeviceWipe(deps, actor, organizationId, deviceId, wipe)).wipe_id,
      });
    }
    case "assign_policy": {
      const policyId = input.policyId;
      if (policyId === undefined) {
        throw new ValidationError("invalid request body", [
          { field: "policy_id", message: "is required for assign_policy (null: follow the default)" },
        ]);
      }
      // An unknown policy fails the whole request (404) rather than every device alike.
      if (policyId !== null) await resolveEffectivePolicy(deps.db, organizationId, policyId);
      return async (deviceId) => {
        await assignDevicePolicy(deps, actor, organizationId, deviceId, policyId);
        return {};
      };
    }
  }
}

function requireReason(input: BulkDeviceInput): string {
  const reason = input.reason?.trim();
  if (!reason) {
    throw new ValidationError("invalid request body", [
      { field: "reason", message: `is required for the ${input.action} action` },
    ]);
  }
  return reason;
}
