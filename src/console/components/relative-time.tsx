import { formatDateTime, formatRelative } from "../lib/format";

/** "5 minutes ago", with the exact time for pointer users (title) and screen readers (hidden text). */
export function RelativeTime({
  value,
  empty = "never",
}: {
  value: string | null | undefined;
  empty?: string;
}) {
  if (!value) return <span class="muted">{empty}</span>;
  const exact = formatDateTime(value);
  return (
    <time dateTime={value} title={exact}>
      {formatRelative(value)}
      <span class="visually-hidden"> ({exact})</span>
    </time>
  );
}
