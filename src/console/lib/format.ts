const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "Nov 23, 2026, 9:41 PM"; an empty value is a dash. */
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return "—";
  return dateTime.format(new Date(value));
}

/** "3 minutes ago", "in 2 days". */
export function formatRelative(value: string | null | undefined, now = Date.now()): string {
  if (!value) return "never";
  const seconds = Math.round((new Date(value).getTime() - now) / 1000);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ["year", 31536000],
    ["month", 2592000],
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
  ];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return relative.format(seconds, "second");
}

export function formatNumber(value: number): string {
  return value.toLocaleString();
}

/** "online" -> "Online", "non_compliant" -> "Non-compliant", "timed_out" -> "Timed out". */
export function humanize(value: string): string {
  const text = value === "non_compliant" ? "non-compliant" : value.replace(/[_.]/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}
