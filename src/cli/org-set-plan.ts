import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { PLANS } from "../db/schema/enums";
import { setOrganizationPlan } from "../domain/organizations/set-organization-plan";
import { type ParsedArgs, UsageError } from "./args";

/** `bulwark org set-plan --org ORG --plan standard|enterprise`: the operator's say over an organization's plan. */
export async function orgSetPlanCommand(config: Readonly<Config>, args: ParsedArgs): Promise<void> {
  const organization = args.flags.get("org");
  const plan = args.flags.get("plan");
  if (!organization || !plan) throw new UsageError("org set-plan needs --org and --plan");
  if (!(PLANS as readonly string[]).includes(plan))
    throw new UsageError(`--plan must be one of ${PLANS.join(", ")}, got "${plan}"`);
  const { deps, database } = await bootDependencies(config);
  try {
    const result = await setOrganizationPlan(deps, { organization, plan: plan as (typeof PLANS)[number] });
    console.log(`Organization "${result.name}" (${result.id}): plan ${result.previousPlan} -> ${plan}`);
  } finally {
    await database.close();
  }
}
