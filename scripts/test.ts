/**
 * `npm test`: builds dist/bulwark with the same function as `npm run build`, then runs every suite
 * in-process on SQLite (the executable tests in test/binary start dist/bulwark themselves), then the
 * HTTP suites two more times: in-process on
 * PostgreSQL (TEST_STORE=postgresql) and against two replicas of the executable on one PostgreSQL
 * database behind HAProxy (TEST_TARGET=replicas, deploy/haproxy-replicas.cfg). Arguments go to every
 * pass (`npm test -- test/http/users.test.ts`, `npm test -- -t "sign in"`); a file outside test/http
 * runs in the first pass only. Ends with "N passed, N failed", the sum of every pass.
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
const HTTP_SUITES = "test/http";

interface Totals {
  passed: number;
  failed: number;
  skipped: number;
  exitCode: number;
  /** bun test's failures, each with the error printed before it: repeated at the end, where a CI log's tail shows them. */
  failures: string[];
  /** How long the pass took, in seconds. */
  seconds: number;
}

/** Runs bun test, echoing its output, and reads the totals from its closing lines. */
async function runBunTest(label: string, testArgs: string[], env: Record<string, string>): Promise<Totals> {
  console.log(`\n== ${label}: bun test ${testArgs.join(" ")}`);
  const started = performance.now();
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
  const seconds = Math.round((performance.now() - started) / 1000);
  return { ...counts(output), exitCode, failures: failuresWithErrors(output), seconds };
}

const TEST_LINE = /^\((pass|fail|skip|todo)\) /;
/** The lines a failure's error takes at most in the closing summary. */
const ERROR_LINES = 30;

/** bun's closing lists of the skipped and failed tests, which repeat lines printed before them. */
const CLOSING_LIST = /^\d+ tests? (skipped|failed|todo):$/;

/** Each failed test, after the (last ERROR_LINES) lines of its error, which bun prints before it. */
function failuresWithErrors(output: string): string[] {
  const lines = output.split("\n");
  const end = lines.findIndex((line) => CLOSING_LIST.test(line.trim()));
  const failures: string[] = [];
  let blockStart = 0;
  lines.slice(0, end === -1 ? lines.length : end).forEach((line, index) => {
    if (!TEST_LINE.test(line)) return;
    if (line.startsWith("(fail)")) {
      const error = lines
        .slice(Math.max(blockStart, index - ERROR_LINES), index)
        .filter((l) => l.trim() !== "");
      failures.push([...error.map((l) => `    ${l}`), line].join("\n"));
    }
    blockStart = index + 1;
  });
  return failures;
}

function counts(output: string) {
  const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(output)?.[1] ?? 0);
  return { passed: count("pass"), failed: count("fail"), skipped: count("skip") };
}

const positionals = args.filter(
  (arg, index) => !arg.startsWith("-") && !args[index - 1]?.match(/^-(t|-test-name-pattern)$/),
);
const flags = args.filter((arg) => !positionals.includes(arg));
// The HTTP suites among the arguments (all of them when none is named): the only ones run more than once.
const httpPaths =
  positionals.length === 0 ? [HTTP_SUITES] : positionals.filter((path) => path.includes(HTTP_SUITES));

/**
 * The passes, in order: every suite in-process on SQLite, then the HTTP suites in-process on PostgreSQL
 * and against two dist/bulwark replicas on PostgreSQL behind HAProxy (test/helpers/test-app.ts reads
 * TEST_TARGET and TEST_STORE). Each HTTP suite runs once per store in-process (the fake clock and the
 * database at hand, so nothing is skipped) and once against the executable: the replicas are
 * dist/bulwark, so what the compiled build does differently (a minified schema's Transform once
 * answered 500 where the source answered 400) shows there, and test/binary starts dist/bulwark on
 * SQLite for the CLI, crash safety and the probe of every route. A pass of one dist/bulwark on SQLite
 * repeated all of that and made .ci/run overrun its 30 minutes (TEST_TARGET=executable still runs it:
 * `TEST_TARGET=executable bun test test/http`). Unit tests do not depend on the store and run once.
 */
const passes = [
  { label: "in-process", all: true, target: "in-process", store: "sqlite" },
  { label: "in-process on PostgreSQL", all: false, target: "in-process", store: "postgresql" },
  {
    label: "against two dist/bulwark replicas on PostgreSQL behind HAProxy",
    all: false,
    target: "replicas",
    store: "postgresql",
    // Each app is two servers and HAProxy, started anew for a test that needs its own: a test of
    // several sign-ins takes longer than bun's 5 s default there.
    timeoutMs: 15_000,
  },
] as const satisfies readonly {
  label: string;
  all: boolean;
  target: string;
  store: string;
  timeoutMs?: number;
}[];

const results: { pass: (typeof passes)[number]; totals: Totals }[] = [];
for (const pass of passes) {
  if (!pass.all && httpPaths.length === 0) continue;
  const totals = await runBunTest(
    `${pass.all ? "every suite" : "the HTTP suites"}, ${pass.label}`,
    [
      ...("timeoutMs" in pass ? ["--timeout", String(pass.timeoutMs)] : []),
      ...(pass.all ? args : [...httpPaths, ...flags]),
    ],
    { TEST_TARGET: pass.target, TEST_STORE: pass.store },
  );
  results.push({ pass, totals });
}
if (httpPaths.length === 0)
  console.log("\n(no HTTP suite selected: nothing to run again on dist/bulwark or PostgreSQL)");

let passed = 0;
let failed = 0;
for (const { pass, totals } of results) {
  passed += totals.passed;
  // A pass that failed without a failed test (a file that did not load, a crash) counts as one failure.
  failed += totals.failed + (totals.exitCode !== 0 && totals.failed === 0 ? 1 : 0);
  if (totals.failures.length > 0) console.log(`\nfailed ${pass.label}:\n${totals.failures.join("\n")}`);
}

/** A pass's line of the summary: its counts, what it skipped and why, its time. */
function summary({ pass, totals }: (typeof results)[number]): string {
  const skipped =
    totals.skipped === 0
      ? ""
      : pass.target !== "in-process"
        ? `, ${totals.skipped} need the in-process app (fake clock or database) and ran in-process only`
        : `, ${totals.skipped} skipped`;
  return `${pass.label}: ${totals.passed} passed, ${totals.failed} failed${skipped} (${totals.seconds} s)`;
}
console.log(`\n${results.map(summary).join("; ")}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
