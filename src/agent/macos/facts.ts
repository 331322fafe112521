/**
 * The facts of a Mac (macOS 12 and later), each read by a root daemon without an MDM channel: files
 * through the MachineReader (so `--root` and `agent capture` work as on Linux), programs by absolute path
 * through the ProgramRunner. A value that cannot be read is left out with the reason, never guessed.
 */

import { PlistError, parsePlist } from "../../lib/plist";
import { type FactReading, firstLine, known, type ProgramRunner, unknown } from "../facts/fact";
import { HANDSHAKE_MAX_AGE_SECONDS, latestHandshake } from "../facts/vpn-connection";
import { type MachineReader, MachineTree } from "../root-path";
import { readProfileState } from "./profile";
import { HOMEBREW_PREFIXES, PROGRAMS, SYSTEM_VERSION_PLIST, TUNNEL_NAME, TUNNEL_NAME_FILE } from "./settings";
import { readTunnelName, WIREGUARD_RUN } from "./tunnel";

/** `os_version`: `ProductVersion` of SystemVersion.plist (`14.4.1`), as osquery and `sw_vers` read it. */
export async function readMacosVersion(tree: MachineReader): Promise<FactReading<string>> {
  const text = await tree.readText(SYSTEM_VERSION_PLIST);
  if (text === null) return unknown(`${SYSTEM_VERSION_PLIST} does not exist`);
  let plist: ReturnType<typeof parsePlist>;
  try {
    plist = parsePlist(text);
  } catch (error) {
    if (error instanceof PlistError)
      return unknown(`${SYSTEM_VERSION_PLIST} is not a plist: ${error.message}`);
    throw error;
  }
  const fields = typeof plist === "object" && !Array.isArray(plist) ? (plist as Record<string, unknown>) : {};
  const version = fields.ProductVersion;
  if (typeof version !== "string" || !/^\d+(\.\d+)*$/.test(version))
    return unknown(`${SYSTEM_VERSION_PLIST} has no ProductVersion`);
  const name = typeof fields.ProductName === "string" ? fields.ProductName : "macOS";
  const build =
    typeof fields.ProductBuildVersion === "string" ? ` (build ${fields.ProductBuildVersion})` : "";
  return known(version, `${name} ${version}${build}, from ${SYSTEM_VERSION_PLIST}`);
}

/**
 * `disk_encrypted`: `fdesetup isactive` prints true or false and exits 0 when FileVault is on, 1 when it
 * is off (fdesetup(8)); anything else is left unknown.
 */
export async function readFileVault(run: ProgramRunner): Promise<FactReading<boolean>> {
  const result = await run([PROGRAMS.fdesetup, "isactive"]);
  const said = result.stdout.trim();
  if (result.code === 0 && said === "true") return known(true, "FileVault is on (fdesetup isactive: true)");
  if (result.code === 1 && said === "false")
    return known(false, "FileVault is off (fdesetup isactive: false)");
  if (result.code === 127)
    return unknown(`${PROGRAMS.fdesetup} is not there: FileVault's state cannot be read`);
  return unknown(
    `fdesetup isactive answered ${JSON.stringify(firstLine(said || result.stderr))} (exit ${result.code}): neither on nor off`,
  );
}

/** The `wg` of Homebrew's wireguard-tools, run from whichever prefix has it. */
export async function runHomebrewWg(run: ProgramRunner, args: string[]) {
  let result = await run([`${HOMEBREW_PREFIXES[0]}/bin/wg`, ...args]);
  for (const prefix of HOMEBREW_PREFIXES.slice(1)) {
    if (result.code !== 127) break;
    result = await run([`${prefix}/bin/wg`, ...args]);
  }
  return result;
}

/**
 * The utun wg-quick made for the tunnel (null: the tunnel is not up), or a problem. A tree of real files
 * (a MachineTree) is judged as wg-quick judges it (tunnel.ts: the name file, its utun's socket, their
 * times, something answering on it). A recorded capture has no file times or sockets: there the name
 * file and whether its socket exists are read through the tree (both recorded), and `wg show` tells
 * whether something answers.
 */
export async function readTunnelInterface(
  tree: MachineReader,
): Promise<{ utun: string } | { down: string } | { problem: string }> {
  if (tree instanceof MachineTree) {
    const found = await readTunnelName(await tree.resolve(WIREGUARD_RUN));
    if (found.state === "up") return { utun: found.utun };
    return found.state === "down" ? { down: found.detail } : { problem: found.detail };
  }
  const text = await tree.readText(TUNNEL_NAME_FILE);
  if (text === null) return { down: `no ${TUNNEL_NAME_FILE}` };
  const name = text.trim();
  if (!/^utun\d+$/.test(name))
    return { down: `${TUNNEL_NAME_FILE} names ${JSON.stringify(name)}, not a utun` };
  if (!(await tree.exists(`${WIREGUARD_RUN}/${name}.sock`)))
    return {
      down: `${TUNNEL_NAME_FILE} names ${name}, but ${WIREGUARD_RUN}/${name}.sock is gone (its wireguard-go has ended)`,
    };
  return { utun: name };
}

/**
 * `vpn_connected`: Homebrew's wg-quick brings the tunnel up as a `utunN` and writes that name to
 * /var/run/wireguard/bulwark.name; connected when wg-quick would take that name file as the tunnel's
 * (readTunnelInterface) and `wg show utunN latest-handshakes` has a handshake in the last 180 s (as on
 * Linux and Windows). No name file, or one wg-quick would not take (left behind by a wireguard-go that
 * ended; /var/run empties only at boot): false.
 */
export async function readMacosTunnel(
  tree: MachineReader,
  live: { isLive: boolean; runProgram: ProgramRunner; nowSeconds: number },
): Promise<FactReading<boolean>> {
  const found = await readTunnelInterface(tree);
  if ("down" in found) return known(false, `the ${TUNNEL_NAME} tunnel is not up (${found.down})`);
  if ("problem" in found) return unknown(found.problem);
  const utun = found.utun;
  if (!live.isLive)
    return unknown(
      `the ${TUNNEL_NAME} tunnel is ${utun}; its handshakes are read with wg on the live machine only`,
    );
  const shown = await runHomebrewWg(live.runProgram, ["show", utun, "latest-handshakes"]);
  if (shown.code === 127)
    return unknown(`wg is not installed in ${HOMEBREW_PREFIXES.join(" or ")} (brew install wireguard-tools)`);
  if (shown.code !== 0) {
    const complaint = firstLine(shown.stderr || shown.stdout);
    // Its wireguard-go is gone (the socket refuses, or wg removed it): the utun it named is gone too.
    if (/No such file or directory|Unable to access interface|Connection refused/i.test(complaint))
      return known(false, `${TUNNEL_NAME_FILE} names ${utun}, which is gone (${complaint})`);
    return unknown(`wg show ${utun} latest-handshakes failed: ${complaint}`);
  }
  const latest = latestHandshake(shown.stdout);
  if (latest === 0) return known(false, `the ${TUNNEL_NAME} tunnel (${utun}) is up with no handshake yet`);
  const age = live.nowSeconds - latest;
  return known(
    age <= HANDSHAKE_MAX_AGE_SECONDS,
    `the ${TUNNEL_NAME} tunnel (${utun}) is up; its latest handshake was ${age} s ago (at most ${HANDSHAKE_MAX_AGE_SECONDS} s counts)`,
  );
}

/**
 * `firewall_enabled`: the Application Firewall's global state, `socketfilterfw --getglobalstate`:
 * "Firewall is enabled. (State = 1)", "Firewall is disabled. (State = 0)", or "Firewall is blocking all
 * non-essential incoming connections. (State = 2)" (block all: on, and stricter).
 */
export async function readApplicationFirewall(run: ProgramRunner): Promise<FactReading<boolean>> {
  const result = await run([PROGRAMS.socketfilterfw, "--getglobalstate"]);
  if (result.code === 127) return unknown(`${PROGRAMS.socketfilterfw} is not there`);
  const text = result.stdout.trim();
  const state = /\(State = (\d+)\)/.exec(text)?.[1];
  if (result.code !== 0 || state === undefined)
    return unknown(
      `socketfilterfw --getglobalstate answered ${JSON.stringify(firstLine(text || result.stderr))} (exit ${result.code})`,
    );
  if (state === "0") return known(false, "the Application Firewall is off (State = 0)");
  if (state === "1") return known(true, "the Application Firewall is on (State = 1)");
  if (state === "2")
    return known(true, "the Application Firewall is on and blocks all incoming connections (State = 2)");
  return unknown(`socketfilterfw --getglobalstate gave State = ${state}, which the agent does not know`);
}

/**
 * `screen_lock_enabled`: not read. `sysadminctl -screenLock status` reports the setting of the user who
 * runs it, in that user's session; the agent is a root daemon outside every session, so what it would
 * read is root's, not the person's at the screen.
 */
export async function readMacosScreenLock(): Promise<FactReading<boolean>> {
  return unknown(
    "the screen lock is each user's setting (sysadminctl -screenLock status reads the caller's, in its session); a root daemon cannot read the person's at the screen",
  );
}

/** `screenshots_blocked`: the agent's restrictions profile (allowScreenShot false) is installed for the Mac. */
export async function readScreenshotsBlocked(run: ProgramRunner): Promise<FactReading<boolean>> {
  const state = await readProfileState(run);
  if ("problem" in state) return unknown(state.problem);
  return known(
    state.installed,
    state.installed ? `${state.detail}: screenshots are not allowed` : state.detail,
  );
}

/** Why USB storage and USB devices are not blocked on a Mac (the facts and MACOS_SUPPORT say the same). */
export const MACOS_USB_REASON =
  "blocking USB on a Mac needs an MDM-supervised Mac (macOS 15's ExternalStorage restriction) or an Endpoint Security entitlement Apple grants, which this agent has neither of";
