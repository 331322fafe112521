/**
 * The restrictions profile: a configuration profile the agent writes (a `com.apple.applicationaccess`
 * payload with `allowScreenShot` false) and hands to the person at the Mac to approve. Since macOS 11,
 * `profiles install` no longer installs a profile silently: the user opens it and approves it in System
 * Settings (Privacy & Security > Profiles), so the setting stays `pending_approval` until `profiles`
 * lists it installed.
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { formatPlist } from "../../lib/plist";
import { firstLine, type ProgramRunner } from "../facts/fact";
import { MACOS_FILES, PROFILE_IDENTIFIER, PROGRAMS } from "./settings";

/** A UUID made from `seed` (SHA-256, laid out as a version-5-style UUID): the same seed, the same UUID. */
function uuidOf(seed: string): string {
  const hex = createHash("sha256").update(seed).digest("hex").slice(0, 32).split("");
  hex[12] = "5";
  hex[16] = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  const text = hex.join("").toUpperCase();
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/**
 * The profile's and its payload's UUIDs, fixed for a state folder: the file the agent writes again is
 * byte for byte the one the user approved, and another enrollment on the same Mac gets its own.
 */
export function profileUuids(stateDir: string): { profile: string; payload: string } {
  const folder = resolve(stateDir);
  return { profile: uuidOf(`bulwark-profile:${folder}`), payload: uuidOf(`bulwark-payload:${folder}`) };
}

/** The profile's text: screenshots (and screen recording) not allowed, for every user of the Mac. */
export function renderRestrictionsProfile(stateDir: string): string {
  const uuids = profileUuids(stateDir);
  return formatPlist({
    PayloadContent: [
      {
        PayloadType: "com.apple.applicationaccess",
        PayloadVersion: 1,
        PayloadIdentifier: `${PROFILE_IDENTIFIER}.applicationaccess`,
        PayloadUUID: uuids.payload,
        PayloadDisplayName: "Screenshots",
        allowScreenShot: false,
      },
    ],
    PayloadDisplayName: "Bulwark restrictions",
    PayloadDescription:
      "Written by the Bulwark agent from your organization's policy (dlp.screenshot_allowed = false): screenshots and screen recording are not allowed.",
    PayloadIdentifier: PROFILE_IDENTIFIER,
    PayloadOrganization: "Bulwark",
    PayloadScope: "System",
    PayloadType: "Configuration",
    PayloadUUID: uuids.profile,
    PayloadVersion: 1,
  });
}

/** `profiles show -type configuration` (as root: the computer's profiles and each user's). */
export const PROFILES_SHOW = [PROGRAMS.profiles, "show", "-type", "configuration"];

/**
 * Each installed profile's identifier and whose it is (`_computerlevel` for the whole Mac, else a user's
 * short name), from `profiles` output lines such as
 * `_computerlevel[1] attribute: profileIdentifier: com.example.restrictions`.
 */
export function installedProfiles(output: string): { owner: string; identifier: string }[] {
  const found: { owner: string; identifier: string }[] = [];
  for (const line of output.split("\n")) {
    const match = /^\s*(\S+?)\[\d+\]\s+attribute:\s+profileIdentifier:\s+(\S+)\s*$/.exec(line);
    if (match) found.push({ owner: match[1] ?? "", identifier: match[2] ?? "" });
  }
  return found;
}

/** Whether the agent's profile is installed for the whole Mac, or why that cannot be told. */
export type ProfileState = { installed: boolean; detail: string } | { problem: string };

/** Reads whether the restrictions profile is installed (at the computer level) with `profiles show`. */
export async function readProfileState(run: ProgramRunner): Promise<ProfileState> {
  const result = await run(PROFILES_SHOW);
  if (result.code === 127) return { problem: `${PROGRAMS.profiles} is not there` };
  const text = `${result.stdout}\n${result.stderr}`;
  const listed = installedProfiles(text).filter((entry) => entry.identifier === PROFILE_IDENTIFIER);
  if (listed.some((entry) => entry.owner === "_computerlevel"))
    return { installed: true, detail: `the profile ${PROFILE_IDENTIFIER} is installed for the whole Mac` };
  if (result.code !== 0)
    return {
      problem: `profiles show -type configuration failed (exit ${result.code}): ${firstLine(result.stderr || result.stdout)}`,
    };
  if (listed.length > 0)
    return {
      installed: false,
      detail: `the profile ${PROFILE_IDENTIFIER} is installed for ${listed.map((entry) => entry.owner).join(", ")} only, not for the whole Mac`,
    };
  return {
    installed: false,
    detail: `the profile ${PROFILE_IDENTIFIER} is not installed (${MACOS_FILES.profile} waits for approval in System Settings when the policy asks for it)`,
  };
}
