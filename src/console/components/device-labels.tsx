import { ApiError, type Schemas } from "../api/client";
import { formatDateTime, formatRelative } from "../lib/format";

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

/** "5 minutes ago", with the exact time for pointer users (title) and screen readers (hidden text). */
export function RelativeTime({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="muted">never</span>;
  const exact = formatDateTime(value);
  return (
    <time dateTime={value} title={exact}>
      {formatRelative(value)}
      <span class="visually-hidden"> ({exact})</span>
    </time>
  );
}

/** "3 devices", "1 device". */
export function countDevices(count: number): string {
  return `${count.toLocaleString()} ${count === 1 ? "device" : "devices"}`;
}

/** The server's message for one field of a 400 (errors[].field), to show next to that field. */
export function fieldErrorOf(error: ApiError | undefined, field: string): string | undefined {
  return error?.body.errors?.find((item) => item.field === field)?.message;
}

/** An error not told field by field next to the form's controls, to show as a notice. */
export function formLevelError(error: ApiError | undefined, fields: string[]): ApiError | undefined {
  const errors = error?.body.errors ?? [];
  const isAllInline = errors.length > 0 && errors.every((item) => fields.includes(item.field));
  return isAllInline ? undefined : error;
}

/** Whatever a call threw, as an ApiError to show. */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, { code: 0, message: String(error) });
}
