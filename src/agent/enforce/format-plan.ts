/**
 * A plan for people (`bulwark agent plan`, `run --dry-run`): each setting with its outcome, then the
 * unified diff of every file it changes and the tunnel commands it runs. The device's private key is
 * never printed.
 */
import type { FileChange, RegistryChange, SettingPlan } from "./plan";
import { MANAGED_FILES, TUNNEL_INTERFACE } from "./settings";

const CONTEXT = 3;
// Beyond this many cells the middle of a file is shown as removed and added rather than compared.
const MAX_COMPARED_CELLS = 4_000_000;

type Edit = { op: " " | "-" | "+"; line: string };

function linesOf(text: string | null): string[] {
  if (text === null || text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else lines[lines.length - 1] += "\n\\ No newline at end of file";
  return lines;
}

/** The shortest edit from `before` to `after` (longest common subsequence of the differing middle). */
function editsOf(before: string[], after: string[]): Edit[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (
    end < before.length - start &&
    end < after.length - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  )
    end++;
  const oldMiddle = before.slice(start, before.length - end);
  const newMiddle = after.slice(start, after.length - end);
  const edits: Edit[] = before.slice(0, start).map((line) => ({ op: " ", line }));
  if ((oldMiddle.length + 1) * (newMiddle.length + 1) > MAX_COMPARED_CELLS) {
    edits.push(...oldMiddle.map((line) => ({ op: "-" as const, line })));
    edits.push(...newMiddle.map((line) => ({ op: "+" as const, line })));
  } else {
    const width = newMiddle.length + 1;
    const common = new Uint32Array((oldMiddle.length + 1) * width);
    for (let i = oldMiddle.length - 1; i >= 0; i--)
      for (let j = newMiddle.length - 1; j >= 0; j--)
        common[i * width + j] =
          oldMiddle[i] === newMiddle[j]
            ? (common[(i + 1) * width + j + 1] ?? 0) + 1
            : Math.max(common[(i + 1) * width + j] ?? 0, common[i * width + j + 1] ?? 0);
    let i = 0;
    let j = 0;
    while (i < oldMiddle.length || j < newMiddle.length) {
      if (i < oldMiddle.length && j < newMiddle.length && oldMiddle[i] === newMiddle[j]) {
        edits.push({ op: " ", line: oldMiddle[i++] as string });
        j++;
      } else if (
        i < oldMiddle.length &&
        (j === newMiddle.length || (common[(i + 1) * width + j] ?? 0) >= (common[i * width + j + 1] ?? 0))
      ) {
        edits.push({ op: "-", line: oldMiddle[i++] as string });
      } else {
        edits.push({ op: "+", line: newMiddle[j++] as string });
      }
    }
  }
  edits.push(...before.slice(before.length - end).map((line) => ({ op: " " as const, line })));
  return edits;
}

/** The hunks of a unified diff (`@@ -a,b +c,d @@` and their lines) between two texts. */
export function unifiedDiffHunks(before: string | null, after: string | null): string[] {
  const edits = editsOf(linesOf(before), linesOf(after));
  const changed = edits.flatMap((edit, index) => (edit.op === " " ? [] : [index]));
  const output: string[] = [];
  let next = 0;
  while (next < changed.length) {
    const first = changed[next] as number;
    let last = first;
    while (next + 1 < changed.length && (changed[next + 1] as number) - last <= 2 * CONTEXT)
      last = changed[++next] as number;
    next++;
    const from = Math.max(0, first - CONTEXT);
    const to = Math.min(edits.length, last + CONTEXT + 1);
    const oldStart = edits.slice(0, from).filter((edit) => edit.op !== "+").length;
    const newStart = edits.slice(0, from).filter((edit) => edit.op !== "-").length;
    const hunk = edits.slice(from, to);
    const oldCount = hunk.filter((edit) => edit.op !== "+").length;
    const newCount = hunk.filter((edit) => edit.op !== "-").length;
    output.push(
      `@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@`,
      // A last line without its line break carries diff's marker on a line of its own.
      ...hunk.flatMap((edit) => (edit.op + edit.line).split("\n")),
    );
  }
  return output;
}

function hidePrivateKey(text: string | null): string | null {
  return text?.replace(/^(\s*PrivateKey\s*=\s*).*$/gm, "$1(the device's private key, not shown)") ?? null;
}

function mode(value: number): string {
  return `0${value.toString(8).padStart(3, "0")}`;
}

/** One file change as a unified diff, with a header saying whether the file is created or deleted. */
export function formatFileChange(change: FileChange): string {
  const before = hidePrivateKey(change.before);
  const after = hidePrivateKey(change.after);
  const what =
    change.before === null
      ? ` (new file, mode ${mode(change.mode)})`
      : change.after === null
        ? " (deleted)"
        : change.restoreOriginal
          ? ` (restored as the agent found it, mode ${mode(change.mode)})`
          : "";
  const hunks = unifiedDiffHunks(before, after);
  return [
    `--- ${change.before === null ? "/dev/null" : change.path}`,
    `+++ ${change.after === null ? "/dev/null" : change.path}${what}`,
    ...(hunks.length > 0 ? hunks : ["(same content; only the mode changes)"]),
  ].join("\n");
}

const COMMANDS = {
  down: `wg-quick down ${MANAGED_FILES.wireguard}`,
  up: `wg-quick up ${MANAGED_FILES.wireguard}`,
  syncconf: `wg syncconf ${TUNNEL_INTERFACE} <(wg-quick strip ${MANAGED_FILES.wireguard})`,
};

/** A registry value change (Windows): `KEY\NAME: before -> after`. */
export function formatRegistryChange(change: RegistryChange): string {
  const shown = (value: RegistryChange["before"]) =>
    value === null ? "(no value)" : `${value.type} ${value.data}`;
  const what = change.release ? " (restored as the agent found it)" : "";
  return `registry ${change.key}\\${change.name}: ${shown(change.before)} -> ${shown(change.after)}${what}`;
}

/**
 * The whole plan for people: one line per setting, then its file diffs, registry changes and commands
 * (`commands`: the platform's tunnel commands, wg-quick's by default).
 */
export function formatPlan(
  plans: readonly SettingPlan[],
  commands: Record<SettingPlan["tunnel"][number], string> = COMMANDS,
): string {
  const blocks = plans.map((plan) => {
    const lines = [`${plan.setting}: ${CONDITIONAL[plan.outcome]}: ${plan.detail}`];
    for (const change of plan.changes) lines.push(formatFileChange(change));
    for (const change of plan.registry ?? []) lines.push(formatRegistryChange(change));
    for (const action of plan.tunnel) lines.push(`would run: ${commands[action]}`);
    return lines.join("\n");
  });
  return `Nothing was changed. What a run would do, setting by setting:\n${blocks.join("\n")}\n`;
}

/** A plan is what would happen: each outcome said in the conditional. */
const CONDITIONAL: Record<SettingPlan["outcome"], string> = {
  enforced: "would be enforced",
  reported: "would be reported",
  unsupported: "unsupported",
  failed: "would fail",
  pending_approval: "would wait for the user's approval",
};
