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

/** The outcome of checking a reported OS version against its platform minimum. */
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

/** Checks a reported OS version against the platform minimum; an unparseable version is unsupported. */
export function checkOsVersion(platform: Platform, osVersion: string): OsVersionCheck {
  const minimum = MINIMUM_MAJOR_VERSIONS[platform];
  if (minimum === null) return { supported: true, required: "any" };
  const major = parseMajorVersion(osVersion);
  return { supported: major !== null && major >= minimum, required: `>= ${minimum}` };
}
