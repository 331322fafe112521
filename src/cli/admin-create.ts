import { readFileSync } from "node:fs";
import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { createAdmin } from "../domain/users/bootstrap-admin";
import { parseEmail } from "../domain/users/email";
import type { ParsedArgs } from "./args";
import { UsageError } from "./args";

/** The password from --password-file, --password, or the first line of standard input. */
async function readPassword(args: ParsedArgs): Promise<string> {
  const file = args.flags.get("password-file");
  const inline = args.flags.get("password");
  if (file !== undefined && inline !== undefined)
    throw new UsageError("give either --password-file or --password, not both");
  if (file !== undefined) {
    try {
      return (readFileSync(file, "utf8").split(/\r?\n/)[0] ?? "").trimEnd();
    } catch (error) {
      throw new UsageError(`cannot read --password-file ${file}: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  if (inline !== undefined) {
    console.error(
      "note: --password is visible in shell history and to other users; prefer --password-file or stdin",
    );
    return inline;
  }
  if (process.stdin.isTTY) console.error("Password (then Enter):");
  const text = await new Response(Bun.stdin.stream()).text();
  return (text.split(/\r?\n/)[0] ?? "").trimEnd();
}

/** `bulwark admin create --email E [--password-file FILE | --password P] [--name N] [--org ORG_NAME]`. */
export async function adminCreateCommand(config: Readonly<Config>, args: ParsedArgs): Promise<void> {
  const given = args.flags.get("email");
  if (!given) throw new UsageError("admin create needs --email");
  // The same rule as POST /users, checked before the password is read or the database opened.
  const email = parseEmail(given);
  const password = await readPassword(args);
  if (password === "")
    throw new UsageError("admin create needs a password (--password-file, or on standard input)");
  const { deps, database } = await bootDependencies(config);
  try {
    const org = (args.flags.get("org") ?? config.admin.org).trim();
    if (org === "") throw new UsageError("--org needs a name");
    const result = await createAdmin(deps, { email, password, name: args.flags.get("name"), org });
    console.log(
      `Created admin ${email} in organization "${org}"${result.organizationCreated ? " (new)" : ""}`,
    );
  } finally {
    database.close();
  }
}
