/** The plan's diffs, held to GNU diff's unified format (`diff -u`) as the independent counterpart. */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unifiedDiffHunks } from "../../../src/agent/enforce/format-plan";

/** The hunks of `diff -u` between two texts (its two header lines left out). */
function gnuDiffHunks(before: string, after: string): string[] {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-diff-"));
  try {
    writeFileSync(join(folder, "a"), before);
    writeFileSync(join(folder, "b"), after);
    const run = Bun.spawnSync(["diff", "-u", join(folder, "a"), join(folder, "b")], { stdout: "pipe" });
    return run.stdout.toString().split("\n").slice(2, -1);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const lines = (count: number, name = "line") =>
  Array.from({ length: count }, (_, index) => `${name} ${index + 1}\n`).join("");

test.each([
  ["a line added at the end", lines(10), `${lines(10)}added\n`],
  ["a line changed in the middle", lines(10), lines(10).replace("line 5\n", "changed 5\n")],
  [
    "two changes far apart make two hunks",
    lines(30),
    lines(30).replace("line 3\n", "x\n").replace("line 27\n", "y\n"),
  ],
  [
    "two changes close together make one hunk",
    lines(30),
    lines(30).replace("line 10\n", "x\n").replace("line 15\n", "y\n"),
  ],
  [
    "a section inserted, a line removed",
    lines(12),
    lines(12).replace("line 6\n", "# BEGIN\na\nb\n# END\n").replace("line 9\n", ""),
  ],
  ["a file without its final line break", "one\ntwo", "one\ntwo\nthree\n"],
  ["a file emptied", lines(3), ""],
])("%s: the same hunks as diff -u", (_, before, after) => {
  expect(unifiedDiffHunks(before, after)).toEqual(gnuDiffHunks(before, after));
});
