/**
 * `npm test`: builds dist/bulwark with the same function as `npm run build`, then runs every suite
 * in-process (the executable tests in test/binary start dist/bulwark themselves), then runs the HTTP
 * suites again against the executable (TEST_TARGET=executable). Arguments go to both `bun test` runs
 * (`npm test -- test/http/users.test.ts`, `npm test -- -t "sign in"`). Ends with "N passed, N failed".
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "./build-executable";
import { ensureTestTools } from "./test-tools";

const root = join(import.meta.dir, "..");
const executable = join(root, "dist", "bulwark");

/** The newest modification time among what goes into the executable. */
function newestSourceTime(): number {
  const inputs = ["src", "migrations", "package.json", "package-lock.json", "scripts/build-executable.ts"];
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const input of inputs) if (existsSync(join(root, input))) visit(join(root, input));
  return newest;
}

// The executable under test is the one `npm run build` makes: reused when it is newer than every
// source (as right after .ci/run's build step), built with the same function otherwise.
if (existsSync(executable) && statSync(executable).mtimeMs > newestSourceTime()) {
  console.log(`testing ${executable} (up to date with the sources)`);
} else {
  const started = performance.now();
  await buildExecutable(executable);
  console.log(`built ${executable} in ${Math.round(performance.now() - started)} ms`);
}

try {
  ensureTestTools();
} catch (error) {
  console.error(`npm test needs system tools: ${(error as Error).message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}

const args = process.argv.slice(2);
const EXECUTABLE_SUITES = "test/http";

interface Totals {
  passed: number;
  failed: number;
  skipped: number;
  exitCode: number;
  /** bun test's "(fail) ..." lines: repeated at the end, where a CI log's tail shows them. */
  failures: string[];
}

/** Runs bun test, echoing its output, and reads the totals from its closing lines. */
async function runBunTest(label: string, testArgs: string[], env: Record<string, string>): Promise<Totals> {
  console.log(`\n== ${label}: bun test ${testArgs.join(" ")}`);
  const child = Bun.spawn([process.execPath, "test", ...testArgs], {
    cwd: root,
    env: { ...process.env, TEST_EXECUTABLE: executable, ...env },
    stdout: "inherit",
    stderr: "pipe",
  });
  let output = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
    const text = decoder.decode(chunk);
    output += text;
    process.stderr.write(text);
  }
  const exitCode = await child.exited;
  const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(output)?.[1] ?? 0);
  const failures = output.split("\n").filter((line) => line.startsWith("(fail)"));
  return { passed: count("pass"), failed: count("fail"), skipped: count("skip"), exitCode, failures };
}

const inProcess = await runBunTest("every suite, in-process", args, {});

const positionals = args.filter(
  (arg, index) => !arg.startsWith("-") && !args[index - 1]?.match(/^-(t|-test-name-pattern)$/),
);
const flags = args.filter((arg) => !positionals.includes(arg));
const executablePaths =
  positionals.length === 0
    ? [EXECUTABLE_SUITES]
    : positionals.filter((path) => path.includes(EXECUTABLE_SUITES));
const onExecutable: Totals =
  executablePaths.length > 0
    ? await runBunTest("the HTTP suites, against dist/bulwark", [...executablePaths, ...flags], {
        TEST_TARGET: "executable",
      })
    : { passed: 0, failed: 0, skipped: 0, exitCode: 0, failures: [] };
if (executablePaths.length === 0)
  console.log("\n(no HTTP suite selected: nothing to run against dist/bulwark)");

const passed = inProcess.passed + onExecutable.passed;
const failed =
  inProcess.failed +
  onExecutable.failed +
  (inProcess.exitCode !== 0 && inProcess.failed === 0 ? 1 : 0) +
  (onExecutable.exitCode !== 0 && onExecutable.failed === 0 ? 1 : 0);
for (const [label, totals] of [
  ["in-process", inProcess],
  ["against dist/bulwark", onExecutable],
] as const) {
  if (totals.failures.length > 0) console.log(`\nfailed ${label}:\n${totals.failures.join("\n")}`);
}
console.log(
  `\nin-process: ${inProcess.passed} passed, ${inProcess.failed} failed; against dist/bulwark: ${onExecutable.passed} passed, ${onExecutable.failed} failed, ${onExecutable.skipped} need the in-process app (fake clock or database) and ran in-process only`,
);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
