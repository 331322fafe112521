import { type Static, Type } from "@sinclair/typebox";
import type { DbOrTx } from "../../db/client";
import type { policies } from "../../db/tables";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { countPolicyDevices } from "../devices/policy-followers";
import { findDefaultPolicyId, findPolicy, readCurrentPolicyData } from "./find-policy";
import type { PolicyData } from "./policy-document";
import { PolicyDataSchema } from "./policy-document";

/** A stored policy (its current version number, not its document). */
export type PolicyRow = typeof policies.$inferSelect;

export const PolicyVersion = Type.Integer({ minimum: 1, description: "Starts at 1; each change adds one" });
const DeviceCount = Type.Integer({
  minimum: 0,
  description:
    "Devices that follow the policy, wiped ones excepted; for the default policy this includes devices without a policy of their own",
});
const IsDefault = Type.Boolean({
  description: "Whether this is the organization default, followed by devices without a policy",
});

/** The full policy object. */
export const PolicySchema = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    name: Type.String(),
    description: Type.String(),
    policy_data: PolicyDataSchema,
    version: PolicyVersion,
    active: Type.Boolean(),
    device_count: DeviceCount,
    is_default: IsDefault,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Policy" },
);

/** One row of the policy list: the full object without its organization and document. */
export const PolicyListItemSchema = Type.Omit(PolicySchema, ["organization_id", "policy_data"], {
  title: "PolicyListItem",
});

/** The full policy object (the `Policy` component of the OpenAPI document, is_default included). */
export type PolicyView = Static<typeof PolicySchema>;
export type PolicyListItem = Static<typeof PolicyListItemSchema>;

/** The list item of a policy row. */
export function toPolicyListItem(row: PolicyRow, deviceCount: number, isDefault: boolean): PolicyListItem {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version: row.currentVersion,
    active: row.isActive,
    device_count: deviceCount,
    is_default: isDefault,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The full object of a policy of the organization, with its current document and device count. */
export async function loadPolicyView(db: DbOrTx, organizationId: string, id: string): Promise<PolicyView> {
  const row = await findPolicy(db, organizationId, id);
  const defaultPolicyId = await findDefaultPolicyId(db, organizationId);
  const deviceCount =
    (await countPolicyDevices(db, organizationId, defaultPolicyId, [row.id])).get(row.id) ?? 0;
  return toPolicyView(row, await readCurrentPolicyData(db, row), deviceCount, row.id === defaultPolicyId);
}

/** The full object of a policy row and its current document. */
export function toPolicyView(
  row: PolicyRow,
  policyData: PolicyData,
  deviceCount: number,
  isDefault: boolean,
): PolicyView {
  return {
    ...toPolicyListItem(row, deviceCount, isDefault),
    organization_id: row.organizationId,
    policy_data: policyData,
  };
}
