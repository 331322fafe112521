import { readFileSync } from "node:fs";
import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { createAdmin } from "../domain/users/bootstrap-admin";
import { parseEmail } from "../domain/users/email";
import { assertPasswordStrength } from "../domain/users/password-rules";
import type { ParsedArgs } from "./args";
import { CommandFailure, UsageError } from "./args";

/** The password from --password-file, --password, or the first line of standard input. */
async function readPassword(args: ParsedArgs): Promise<string> {
  const file = args.flags.get("password-file");
  const inline = args.flags.get("password");
  if (file !== undefined && inline !== undefined)
    throw new UsageError("give either --password-file or --password, not both");
  if (file !== undefined) {
    try {
      return readFileSync(file, "utf8").split(/\r?\n/)[0] ?? "";
    } catch (error) {
      throw new CommandFailure(
        `cannot read --password-file ${file}: ${(error as Error).message.split("\n")[0]}`,
      );
    }
  }
  if (inline !== undefined) {
    console.error(
      "note: --password is visible in shell history and to other users; prefer --password-file or stdin",
    );
    return inline;
  }
  return process.stdin.isTTY ? readHiddenLine("Password: ") : readFirstLine();
}

/** The first line of standard input (a pipe or a file), without its line ending. */
async function readFirstLine(): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of Bun.stdin.stream()) {
    text += decoder.decode(chunk, { stream: true });
    const end = text.search(/\r?\n/);
    if (end !== -1) return text.slice(0, end);
  }
  return text;
}

/** A line typed at the terminal, not echoed; Enter ends it, Ctrl-C or Ctrl-D abandons it. */
function readHiddenLine(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.resume();
  let line = "";
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      outcome();
    };
    const onData = (chunk: Buffer) => {
      for (const character of chunk.toString("utf8")) {
        if (character === "\r" || character === "\n") return finish(() => resolve(line));
        if (character === "\u0003" || character === "\u0004")
          return finish(() => reject(new UsageError("admin create: no password given")));
        if (character === "\u007f" || character === "\b") line = line.slice(0, -1);
        else line += character;
      }
    };
    stdin.on("data", onData);
  });
}

/**
 * What the operator does when the installation's second organization replaced the VPN server's key pair
 * (shown by `admin create`, and by `serve` when its first run made that organization).
 */
export const SERVER_KEY_ROTATED =
  "The installation now has several organizations, so the VPN server's key pair was replaced: export the server configuration again with `bulwark vpn server-config` and apply it on the WireGuard server (docs/vpn.md); devices switch to the new key at their next check-in.";

/** `bulwark admin create --email E [--password-file FILE | --password P] [--name N] [--org ORG_NAME]`. */
export async function adminCreateCommand(config: Readonly<Config>, args: ParsedArgs): Promise<void> {
  const given = args.flags.get("email");
  if (!given) throw new UsageError("admin create needs --email");
  // The same rule as POST /users, checked before the password is read or the database opened.
  const email = parseEmail(given);
  const password = await readPassword(args);
  if (password === "")
    throw new UsageError("admin create needs a password (--password-file, or on standard input)");
  // Checked before the database is opened (or created) for nothing.
  assertPasswordStrength(password, "password");
  const { deps, database } = await bootDependencies(config);
  try {
    const org = (args.flags.get("org") ?? config.admin.org).trim();
    if (org === "") throw new UsageError("--org needs a name");
    const result = await createAdmin(deps, { email, password, name: args.flags.get("name"), org });
    console.log(
      `Created admin ${email} in organization "${org}"${result.vpnSubnet ? ` (new; VPN subnet ${result.vpnSubnet})` : ""}`,
    );
    if (result.isServerKeyRotated) console.log(SERVER_KEY_ROTATED);
  } finally {
    await database.close();
  }
}
