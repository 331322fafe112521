import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { createAdmin } from "../domain/users/bootstrap-admin";
import type { ParsedArgs } from "./args";
import { UsageError } from "./args";

/** `bulwark admin create --email E --password P [--name N] [--org ORG_NAME]`. */
export async function adminCreateCommand(config: Readonly<Config>, args: ParsedArgs): Promise<void> {
  const email = args.flags.get("email");
  const password = args.flags.get("password");
  if (!email || !password) throw new UsageError("admin create needs --email and --password");
  const { deps, database } = await bootDependencies(config);
  try {
    const org = args.flags.get("org") ?? config.admin.org;
    const result = await createAdmin(deps, { email, password, name: args.flags.get("name"), org });
    console.log(
      `Created admin ${email.trim().toLowerCase()} in organization "${org}"${result.organizationCreated ? " (new)" : ""}`,
    );
  } finally {
    database.close();
  }
}
