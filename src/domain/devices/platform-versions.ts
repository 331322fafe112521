/** The platforms a device may run (`platform` in the OpenAPI document). */
import { PLATFORMS } from "../../db/schema/enums";

export { PLATFORMS };

/** One of the supported device platforms. */
export type Platform = (typeof PLATFORMS)[number];

/** The lowest supported major OS version per platform (docs/agent-api.md, compliance); null when any version is supported. */
export const MINIMUM_MAJOR_VERSIONS: Readonly<Record<Platform, number | null>> = {
  linux: null,
  // Windows 11 still reports major version 10 (10.0.22000 and up), so 10 covers both 10 and 11.
  windows: 10,
  macos: 12,
  android: 10,
  ios: 15,
};

/**
 * `devices.min_os_versions`: a minimum version per platform (`windows`, `macos`, `android`, `ios`,
 * replacing the built-in one) or per Linux distribution, named by its os-release ID (`ubuntu`, `debian`).
 */
export type OsMinimums = Readonly<Record<string, string>>;

/** The outcome of checking a reported OS version against its minimum. */
export interface OsVersionCheck {
  supported: boolean;
  /** The requirement in words, e.g. ">= 12", or "any" when the platform has no minimum. */
  required: string;
}

/** Tells whether a string names one of the supported platforms. */
export function isPlatform(value: string): value is Platform {
  return (PLATFORMS as readonly string[]).includes(value);
}

/** Reads the major version from the first number group of an OS version ("macOS 13.4" -> 13), or null. */
export function parseMajorVersion(osVersion: string): number | null {
  const match = /\d+/.exec(osVersion);
  return match === null ? null : Number(match[0]);
}

/** The numbers of the first dotted number group ("macOS 13.4.1" -> [13, 4, 1]), or null. */
function parseVersion(text: string): number[] | null {
  const match = /\d+(?:\.\d+)*/.exec(text);
  return match === null ? null : match[0].split(".").map(Number);
}

/** Whether `version` is at least `minimum`, number by number (a missing number counts as 0). */
function isAtLeast(version: readonly number[], minimum: readonly number[]): boolean {
  for (let index = 0; index < minimum.length; index++) {
    const difference = (version[index] ?? 0) - (minimum[index] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return true;
}

/**
 * A Linux `os_version` as the agent reports it, os-release's `ID VERSION_ID` (`ubuntu 22.04`): the
 * distribution (lower-cased) and the rest; null when it is not of that form.
 */
export function linuxDistribution(osVersion: string): { id: string; version: string } | null {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s+(\S.*)$/.exec(osVersion.trim());
  return match ? { id: (match[1] as string).toLowerCase(), version: match[2] as string } : null;
}

/**
 * The minimum a device's OS version is held to, or null when none applies: the platform's entry of
 * `minimums`, else its built-in minimum; on Linux, the entry of the distribution its `os_version` names
 * (none for a distribution not listed, or an os_version that names none).
 */
export function osVersionMinimum(
  platform: Platform,
  osVersion: string | null,
  minimums: OsMinimums = {},
): string | null {
  if (platform === "linux") {
    const distribution = osVersion === null ? null : linuxDistribution(osVersion);
    return (distribution && Object.hasOwn(minimums, distribution.id) && minimums[distribution.id]) || null;
  }
  if (Object.hasOwn(minimums, platform)) return minimums[platform] ?? null;
  const builtIn = MINIMUM_MAJOR_VERSIONS[platform];
  return builtIn === null ? null : String(builtIn);
}

/**
 * Checks a reported OS version against its minimum (osVersionMinimum), number by number: `22.04`
 * holds `ubuntu 22.04` and `ubuntu 24.04` but not `ubuntu 20.04`. An unparseable version is unsupported.
 */
export function checkOsVersion(
  platform: Platform,
  osVersion: string,
  minimums: OsMinimums = {},
): OsVersionCheck {
  const minimum = osVersionMinimum(platform, osVersion, minimums);
  if (minimum === null) return { supported: true, required: "any" };
  const reported = platform === "linux" ? (linuxDistribution(osVersion)?.version ?? "") : osVersion;
  const version = parseVersion(reported);
  return {
    supported: version !== null && isAtLeast(version, parseVersion(minimum) ?? []),
    required: `>= ${minimum}`,
  };
}
