import { readFileSync, statSync } from "node:fs";
import { CommandFailure, type ParsedArgs, UsageError } from "./args";

/**
 * The sync's default pace: a device enrolled is a peer within about this many seconds, before its
 * WireGuard retries its first unanswered handshake (5 s later), so that its tunnel is up within one retry.
 */
const DEFAULT_INTERVAL_SECONDS = 3;
/** What Linux takes as an interface name (IFNAMSIZ - 1 characters, no slash, blank or colon). */
const INTERFACE_NAME = /^[A-Za-z0-9_=+.-]{1,15}$/;
const API_KEY = /^bwk_[A-Za-z0-9_-]+$/;

/** --server as a base URL without a trailing slash: http or https, nothing after the path. */
function serverOf(args: ParsedArgs): string {
  const given = args.flags.get("server");
  if (!given) throw new UsageError("--server URL is required: the Bulwark server's base URL");
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--server ${given}: not a URL (e.g. https://bulwark.example.com)`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UsageError(`--server ${given}: must be an http or https URL`);
  if (url.username || url.password || url.search || url.hash)
    throw new UsageError(`--server ${given}: give only the scheme, host, port and path`);
  return url.href.replace(/\/+$/, "");
}

/**
 * The API keys of the --api-key-file files (repeatable): one key per line, blank lines and `#` comments
 * skipped. Keys are read from files only, never the command line, where any user's `ps` would show them.
 */
function apiKeysOf(args: ParsedArgs): string[] {
  const files = args.repeated.get("api-key-file") ?? [];
  if (files.length === 0)
    throw new UsageError(
      "--api-key-file FILE is required: a file holding an API key with the vpn:read scope (one per line)",
    );
  const keys: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      throw new UsageError(`--api-key-file ${file}: ${code === "ENOENT" ? "no such file" : message}`);
    }
    const lines = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    if (lines.length === 0) throw new UsageError(`--api-key-file ${file}: holds no API key`);
    for (const [index, line] of lines.entries()) {
      // The line itself is never said: it may be a key with a typo.
      if (!API_KEY.test(line))
        throw new UsageError(`--api-key-file ${file}: key ${index + 1} is not an API key (bwk_...)`);
      if (!keys.includes(line)) keys.push(line);
    }
  }
  return keys;
}

function interfaceOf(args: ParsedArgs): string {
  const iface = args.flags.get("interface") ?? "wg0";
  if (!INTERFACE_NAME.test(iface))
    throw new UsageError(`--interface ${iface}: not an interface name (up to 15 of A-Z a-z 0-9 _ = + . -)`);
  return iface;
}

function intervalOf(args: ParsedArgs): number | null {
  const given = args.flags.get("interval");
  if (given === undefined) return null;
  const seconds = Number(given);
  if (!/^\d+(\.\d+)?$/.test(given) || seconds < 1 || seconds > 3600)
    throw new UsageError(`--interval ${given}: must be a number of seconds from 1 to 3600`);
  return seconds;
}

async function caOf(args: ParsedArgs): Promise<string | null> {
  const file = args.flags.get("ca-file");
  if (file === undefined) return null;
  const { readServerCa } = await import("../agent/identity/server-ca");
  try {
    return readServerCa(file);
  } catch (error) {
    throw new UsageError(`--ca-file ${file}: ${(error as Error).message}`);
  }
}

/**
 * `bulwark vpn sync`: keeps the interface's peers equal to the server's list until SIGTERM or SIGINT
 * (then exits 0); with --once, one cycle (exit 1 with one line when it could not finish).
 */
export async function vpnSyncCommand(args: ParsedArgs): Promise<void> {
  const options = {
    server: serverOf(args),
    apiKeys: apiKeysOf(args),
    iface: interfaceOf(args),
    intervalSeconds: intervalOf(args) ?? DEFAULT_INTERVAL_SECONDS,
    isOnce: args.switches.has("once"),
    ca: await caOf(args),
  };
  const { runVpnSync, VpnSyncFailure } = await import("../vpn-sync/sync-loop");
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  try {
    await runVpnSync({ ...options, signal: stop.signal });
  } catch (error) {
    if (error instanceof VpnSyncFailure) throw new CommandFailure(error.message);
    throw error;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}

/** `bulwark vpn install-service`: the sync as a systemd service (src/vpn-sync/install-service.ts). */
export async function vpnInstallServiceCommand(args: ParsedArgs): Promise<void> {
  const root = args.flags.get("root") ?? "/";
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`--root ${root}: not a folder`);
  const options = {
    root,
    server: serverOf(args),
    apiKeys: apiKeysOf(args),
    iface: interfaceOf(args),
    intervalSeconds: intervalOf(args),
    ca: await caOf(args),
  };
  const { installVpnSyncService, InstallServiceError } = await import("../vpn-sync/install-service");
  try {
    for (const line of installVpnSyncService(options)) console.error(line);
  } catch (error) {
    if (!(error instanceof InstallServiceError)) throw error;
    throw error.exitCode === 2 ? new UsageError(error.message) : new CommandFailure(error.message);
  }
}
