import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { confirmSsoDomain, listSsoDomains, removeSsoDomain } from "../domain/sso/sso-domains";
import { type ParsedArgs, UsageError } from "./args";

const USAGE = "org sso-domain add|remove --org ORG DOMAIN, or org sso-domain list [--org ORG]";

/**
 * `bulwark org sso-domain add|remove|list`: the operator's say over which organization people of an
 * email domain sign in with, on an installation of several organizations.
 */
export async function orgSsoDomainCommand(config: Readonly<Config>, args: ParsedArgs): Promise<void> {
  const [action, domain] = args.positionals;
  const organization = args.flags.get("org");
  if (action !== "add" && action !== "remove" && action !== "list") throw new UsageError(USAGE);
  if (action !== "list" && (!organization || !domain))
    throw new UsageError(`org sso-domain ${action} needs --org and a domain`);
  if (action === "list" && domain !== undefined) throw new UsageError(`unexpected argument "${domain}"`);
  const { deps, database } = await bootDependencies(config);
  try {
    if (action === "add") {
      const confirmed = await confirmSsoDomain(deps, {
        organization: organization as string,
        domain: domain as string,
      });
      console.log(
        `${confirmed.domain}: confirmed for "${confirmed.organizationName}" (${confirmed.organizationId})${confirmed.wasClaimed ? "" : ", claimed now"}; single sign-on discovery sends its people there`,
      );
    } else if (action === "remove") {
      const removed = await removeSsoDomain(deps, {
        organization: organization as string,
        domain: domain as string,
      });
      console.log(
        `${removed.domain}: no longer claimed by "${removed.organizationName}" (${removed.organizationId})`,
      );
    } else {
      const claims = await listSsoDomains(deps, organization);
      if (claims.length === 0) console.log("No email domain is claimed.");
      for (const claim of claims)
        console.log(
          `${claim.domain}\t${claim.organizationName} (${claim.organizationId})\t${claim.confirmedBy === null ? "awaiting confirmation" : `confirmed (${claim.confirmedBy})`}`,
        );
    }
  } finally {
    await database.close();
  }
}
