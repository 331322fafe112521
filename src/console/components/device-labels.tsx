import type { Schemas } from "../api/client";

export type Platform = Schemas["DeviceListItem"]["platform"];
export type DeviceStatus = Schemas["DeviceListItem"]["status"];
export type ComplianceStatus = Schemas["ComplianceStatus"];

export const PLATFORMS: readonly Platform[] = ["linux", "windows", "macos", "android", "ios"];
export const DEVICE_STATUSES: readonly DeviceStatus[] = [
  "online",
  "offline",
  "suspended",
  "pending",
  "wiped",
];
export const COMPLIANCE_STATUSES: readonly ComplianceStatus[] = ["compliant", "non_compliant", "unknown"];

/** Platform names as their makers write them (humanize would say "Macos", "Ios"). */
const PLATFORM_LABELS: Record<Platform, string> = {
  linux: "Linux",
  windows: "Windows",
  macos: "macOS",
  android: "Android",
  ios: "iOS",
};

export function platformLabel(platform: string): string {
  return PLATFORM_LABELS[platform as Platform] ?? platform;
}

/** `value` when it is one of `allowed` (a hand-edited URL must not become a 400), else undefined. */
export function oneOf<T extends string>(allowed: readonly T[], value: string | null): T | undefined {
  return allowed.find((item) => item === value);
}

/** "3 devices", "1 device". */
export function countDevices(count: number): string {
  return `${count.toLocaleString()} ${count === 1 ? "device" : "devices"}`;
}
