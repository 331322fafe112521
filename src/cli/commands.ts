import type { Config } from "../config/config-schema";
import { VERSION } from "../version";
import { adminCreateCommand } from "./admin-create";
import { AGENT_COMMANDS, agentHelp } from "./agent-commands";
import { UsageError } from "./args";
import { backupCommand } from "./backup";
import { type Command, commandLines } from "./command";
import { configCheckCommand, configExampleCommand } from "./config-commands";
import { dbCopyCommand } from "./db-copy";
import { migrateCommand } from "./migrate";
import { orgSetPlanCommand } from "./org-set-plan";
import { orgSsoDomainCommand } from "./org-sso-domain";
import { restoreCommand } from "./restore";
import { serveCommand } from "./serve";
import { vpnServerConfigCommand } from "./vpn-server-config";
import { vpnInstallServiceCommand, vpnSyncCommand } from "./vpn-sync";

/** Every command, in the order `bulwark help` lists them. */
export const COMMANDS: readonly Command[] = [
  {
    name: "serve",
    usage: "serve [--config FILE]",
    summary: "migrate the database, then serve the API (creates the first admin on first run)",
    flags: ["config"],
    positionals: 0,
    needsConfig: true,
    run: (config) => serveCommand(config as Config),
  },
  {
    name: "migrate",
    usage: "migrate [--config FILE]",
    summary: "apply pending database migrations and exit",
    flags: ["config"],
    positionals: 0,
    needsConfig: true,
    run: (config) => migrateCommand(config as Config),
  },
  {
    name: "admin create",
    usage: "admin create --email E [--password-file FILE | --password P] [--name N] [--org ORG_NAME]",
    summary:
      "create an admin user (and the organization if it does not exist); without a password flag the\n" +
      "password is read from standard input, which keeps it out of shell history",
    flags: ["config", "email", "password", "password-file", "name", "org"],
    positionals: 0,
    needsConfig: true,
    run: (config, args) => adminCreateCommand(config as Config, args),
  },
  {
    name: "org set-plan",
    usage: "org set-plan --org ORG --plan standard|enterprise",
    summary:
      "set an organization's plan (by name or id): enterprise raises rate limits and enables SAML; an\n" +
      "organization's own admins cannot change it",
    flags: ["config", "org", "plan"],
    positionals: 0,
    needsConfig: true,
    run: (config, args) => orgSetPlanCommand(config as Config, args),
  },
  {
    name: "org sso-domain",
    usage: "org sso-domain add|remove --org ORG DOMAIN | org sso-domain list [--org ORG]",
    summary:
      "confirm (add) or take away (remove) an email domain's single sign-on for an organization (by name\n" +
      "or id): with several organizations, discovery by email domain uses a domain only once confirmed;\n" +
      "list shows every claim",
    flags: ["config", "org"],
    positionals: 2,
    needsConfig: true,
    run: (config, args) => orgSsoDomainCommand(config as Config, args),
  },
  {
    name: "vpn server-config",
    usage: "vpn server-config [--config FILE]",
    summary:
      "print the WireGuard server's wg-quick file: every organization's devices and the server's private\n" +
      "key (e.g. > /etc/wireguard/wg0.conf); safe while serving",
    flags: ["config"],
    positionals: 0,
    needsConfig: true,
    run: (config) => vpnServerConfigCommand(config as Config),
  },
  {
    name: "vpn sync",
    usage:
      "vpn sync --server URL --api-key-file FILE... [--interface wg0] [--interval SECONDS] [--ca-file PEM] [--once]",
    summary:
      "on the WireGuard server: keep the interface's peers equal to the server's list (GET /api/v1/vpn/peers,\n" +
      "every 3 s by default, a 304 when nothing changed) with `wg set`, never touching the interface's own\n" +
      "key, port or addresses; one log line per change; with the vpn:report scope it also reports the\n" +
      "handshakes it sees (a phone without an agent is online by them). The file holds API keys with the\n" +
      "vpn:read scope, one per line (one per organization using this server). While the server is away the peers stay and\n" +
      "it retries, 1 s doubling to 60 s. --once: one pass, exit 1 when it could not finish",
    flags: ["server", "api-key-file", "interface", "interval", "ca-file"],
    switches: ["once"],
    positionals: 0,
    needsConfig: false,
    run: (_config, args) => vpnSyncCommand(args),
  },
  {
    name: "vpn install-service",
    usage:
      "vpn install-service --server URL --api-key-file FILE... [--interface wg0] [--interval SECONDS] [--ca-file PEM] [--root DIR]",
    summary:
      "install `vpn sync` as a systemd service (deploy/bulwark-vpn-sync.service): the executable copied to\n" +
      "/usr/local/bin/bulwark, the keys to /etc/bulwark/vpn-sync.key (0600), the unit enabled and started\n" +
      "(exit 2 without systemd, nothing written); --root DIR writes the files under DIR only",
    flags: ["server", "api-key-file", "interface", "interval", "ca-file", "root"],
    positionals: 0,
    needsConfig: false,
    run: (_config, args) => vpnInstallServiceCommand(args),
  },
  {
    name: "backup",
    usage: "backup FILE [--config FILE]",
    summary:
      "write a consistent copy of the live database to FILE (safe while serving); keep <database>.key,\n" +
      "which seals stored secrets, safe once on its own: it is not part of the copy",
    flags: ["config"],
    positionals: 1,
    needsConfig: true,
    run: (config, args) => backupCommand(config as Config, args.positionals[0]),
  },
  {
    name: "restore",
    usage: "restore FILE [--config FILE]",
    summary:
      "with the server stopped: replace the database with a backup, after checking that FILE is a Bulwark\n" +
      "database this version can run and passes SQLite's integrity check; the current database is kept as\n" +
      "<database>.before-restore",
    flags: ["config"],
    positionals: 1,
    needsConfig: true,
    run: async (config, args) => await restoreCommand(config as Config, args.positionals[0]),
  },
  {
    name: "db copy",
    usage: "db copy --from SOURCE --to TARGET [--key-file FILE]",
    summary:
      "with the servers stopped: copy a whole installation between stores, either way (each a SQLite file\n" +
      "or a postgres:// URL, password in it or in PGPASSWORD) into an empty target, refused otherwise;\n" +
      "ends comparing each table's rows. The key file (default <SOURCE>.key; needed when SOURCE is\n" +
      "PostgreSQL) must open the source's secrets; a SQLite target gets a copy of it as <TARGET>.key",
    flags: ["from", "to", "key-file"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => await dbCopyCommand(args),
  },
  {
    name: "config check",
    usage: "config check [--config FILE]",
    summary:
      "validate the configuration as serve would and print the effective values, each with its source\n" +
      "(default, file or environment variable), secrets masked",
    flags: ["config"],
    positionals: 0,
    // It loads the configuration itself, to say where each value came from.
    needsConfig: false,
    run: (_config, args) => configCheckCommand(args),
  },
  {
    name: "config example",
    usage: "config example",
    summary: "print the annotated example configuration (every key, its default and meaning)",
    flags: [],
    positionals: 0,
    needsConfig: false,
    run: () => configExampleCommand(),
  },
  {
    name: "version",
    usage: "version",
    summary: "print the version",
    flags: [],
    positionals: 0,
    needsConfig: false,
    run: () => console.log(`bulwark ${VERSION}`),
  },
  {
    name: "help",
    usage: "help [agent [COMMAND]]",
    summary:
      "print this help; `help agent` lists the device agent's commands, `help agent COMMAND` one's flags",
    flags: [],
    positionals: 2,
    needsConfig: false,
    run: (_config, args) => console.log(helpFor(args.positionals)),
  },
];

/** `bulwark help [agent [COMMAND]]`. */
function helpFor(words: readonly string[]): string {
  if (words.length === 0) return helpText();
  if (words[0] !== "agent")
    throw new UsageError(`no help for "${words[0]}": bulwark help lists every command`);
  return agentHelp(words.slice(1));
}

/** `bulwark help`, made from the table. */
function helpText(): string {
  return [
    "Bulwark: device and security-policy management",
    "",
    "Usage: bulwark <command> [flags]",
    "",
    "Commands:",
    ...commandLines(COMMANDS),
    "",
    "Device agent commands (Linux):",
    ...commandLines(AGENT_COMMANDS),
    "",
    "Configuration: --config FILE, else ./bulwark.toml if present; every key can be overridden with",
    "BULWARK_<SECTION>_<KEY> (e.g. BULWARK_SERVER_PORT=9000). `bulwark config example` prints every key.",
  ].join("\n");
}
