import { humanize } from "../lib/format";

/** Each state has a symbol and a word as well as a colour: nothing is told by colour alone. */
const SYMBOLS: Record<string, string> = {
  online: "●",
  offline: "○",
  suspended: "‖",
  wiped: "∅",
  pending: "…",
  compliant: "✓",
  non_compliant: "✗",
  unknown: "?",
  completed: "✓",
  failed: "✗",
  enforced: "✓",
  reported: "◌",
  unsupported: "⊘",
  pending_approval: "⏳",
  timed_out: "⌛",
  success: "✓",
  failure: "✗",
  active: "●",
  inactive: "○",
  disabled: "⊘",
  critical: "‼",
  high: "!",
  medium: "•",
  low: "·",
};

export function StatusBadge({ value, label }: { value: string; label?: string }) {
  return (
    <span class={`badge badge-${value.replace(/[^a-z_]/g, "")}`}>
      <span aria-hidden="true">{SYMBOLS[value] ?? "•"}</span> {label ?? humanize(value)}
    </span>
  );
}
