/**
 * `bulwark agent install-service` and what undoes it, from the built executable: on a prepared tree it
 * copies itself to /usr/local/bin and writes the unit starting that copy; `unenroll` takes both away
 * again (with an enrollment: test/binary/agent-run.test.ts); on this machine (ROOT /, in a mount namespace of its own so that nothing real is touched) it
 * refuses without systemd, and takes back what it wrote when systemctl fails; the service's loop ends
 * when there is no enrollment, with the exit code the unit does not restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildMachine, OS_RELEASES, removeMachines } from "../helpers/agent-machine";
import { buildBinary, expectOneLine, runCommand } from "../helpers/binary";

const SHIPPED_UNIT = readFileSync(join(import.meta.dir, "../../deploy/bulwark-agent.service"), "utf8");
const UNIT = "etc/systemd/system/bulwark-agent.service";
const COPY = "usr/local/bin/bulwark";

let binary: string;

beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

afterAll(() => removeMachines());

/** A state folder that does not exist yet. */
function newStateDir(): string {
  return join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "state");
}

function agent(root: string, stateDir: string, ...args: string[]) {
  return runCommand(binary, ["agent", ...args, "--root", root, "--state-dir", stateDir], tmpdir());
}

/**
 * Runs `bulwark agent ...` on this machine (ROOT /) in a mount namespace of its own, where /run,
 * /etc/systemd/system and /usr/local are empty tmpfs: systemd looks as if it runs when `withSystemd`
 * (/run/systemd/system exists, as sd_booted(3) checks, but no systemd answers there). Returns its exit
 * code and output, and every path it left in those folders (which go with the namespace).
 */
function onThisMachine(withSystemd: boolean, ...args: string[]) {
  const listing = join(mkdtempSync(join(tmpdir(), "bulwark-listing-")), "left");
  const script = [
    "set -e",
    "mount -t tmpfs tmpfs /run",
    withSystemd ? "mkdir -p /run/systemd/system" : "true",
    "mount -t tmpfs tmpfs /etc/systemd/system",
    "mount -t tmpfs tmpfs /usr/local",
    "set +e",
    '"$@"; code=$?',
    'find /etc/systemd/system /usr/local -mindepth 1 > "$0"',
    'exit "$code"',
  ].join("\n");
  const result = runCommand(
    "unshare",
    ["--mount", "--propagation", "private", "sh", "-c", script, listing, binary, "agent", ...args],
    tmpdir(),
  );
  return { ...result, left: readFileSync(listing, "utf8").split("\n").filter(Boolean) };
}

describe("bulwark agent install-service", () => {
  test("on a prepared tree: copies this executable to /usr/local/bin (0755), writes the unit starting that copy, and records both", () => {
    const root = buildMachine(OS_RELEASES.debian);
    const stateDir = newStateDir();
    const installed = agent(root, stateDir, "install-service");
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).toContain(`Installed ${join(root, COPY)} (0755), a copy of ${binary}`);
    expect(installed.stderr).toContain(
      `Wrote ${join(root, UNIT)} (ExecStart=/usr/local/bin/bulwark agent run --state-dir ${stateDir})`,
    );
    expect(installed.stderr).toContain("systemctl daemon-reload && systemctl enable --now bulwark-agent");
    expect(statSync(join(root, COPY)).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(root, COPY)).equals(readFileSync(binary))).toBe(true);
    expect(statSync(join(root, UNIT)).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(root, UNIT), "utf8")).toBe(
      SHIPPED_UNIT.replace(
        "ExecStart=/usr/local/bin/bulwark agent run",
        `ExecStart=/usr/local/bin/bulwark agent run --state-dir ${stateDir}`,
      ),
    );
    expect(JSON.parse(readFileSync(join(stateDir, "service.json"), "utf8"))).toMatchObject({
      unit: { path: `/${UNIT}` },
      executable: { path: `/${COPY}` },
    });

    // Again (an upgrade with the same file): the copy is already there and stays the one to remove.
    const again = agent(root, stateDir, "install-service");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${join(root, COPY)} is already this executable`);
    expect(JSON.parse(readFileSync(join(stateDir, "service.json"), "utf8")).executable).toMatchObject({
      path: `/${COPY}`,
    });
  });

  test("installed before any enrollment, unenroll still removes it, but not a unit edited since", () => {
    const root = buildMachine(OS_RELEASES.debian);
    const stateDir = newStateDir();
    const installed = agent(root, stateDir, "install-service");
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).toContain("holds no enrollment yet: the service stops at once");
    const edited = `${readFileSync(join(root, UNIT), "utf8")}# an administrator's note\n`;
    writeFileSync(join(root, UNIT), edited);

    const unenrolled = agent(root, stateDir, "unenroll");
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(unenrolled.stderr).toContain(`${join(root, UNIT)} changed since install-service: left as it is`);
    expect(unenrolled.stderr).toContain(`Removed ${join(root, COPY)}`);
    expect(readFileSync(join(root, UNIT), "utf8")).toBe(edited);
    expect(existsSync(join(root, COPY))).toBe(false);
    expect(agent(root, stateDir, "unenroll").code).toBe(2);
  });

  test("on this machine without systemd (a container): one line, exit 2, and nothing written", () => {
    const stateDir = newStateDir();
    const refused = onThisMachine(false, "install-service", "--state-dir", stateDir);
    expect(refused.code).toBe(2);
    expectOneLine(
      refused.stderr,
      "systemd is not running here (no /run/systemd/system): nothing was installed; start `bulwark agent run` with your service manager",
    );
    expect(refused.left).toEqual([]);
    expect(existsSync(stateDir)).toBe(false);
  });

  test("on this machine when systemctl fails: systemctl's first line, exit 1, and what it wrote removed again", () => {
    const stateDir = newStateDir();
    const failed = onThisMachine(true, "install-service", "--state-dir", stateDir);
    expect(failed.code).toBe(1);
    // systemctl reaches no systemd in the namespace; its own first line is said, once.
    expectOneLine(failed.stderr, "systemctl daemon-reload failed: ");
    expect(failed.stderr).toContain("; what install-service wrote is removed again");
    // The folders it made (/usr/local/bin, which every system has) stay; no file does.
    expect(failed.left).toEqual(["/usr/local/bin"]);
    expect(existsSync(stateDir)).toBe(false);
  });

  test("not as root: one line saying to run it as root", () => {
    // A copy nobody may run (the built one may sit in a folder only root can enter).
    const folder = mkdtempSync(join(tmpdir(), "bulwark-nobody-"));
    chmodSync(folder, 0o755);
    const executable = join(folder, "bulwark");
    copyFileSync(binary, executable);
    chmodSync(executable, 0o755);
    const root = buildMachine(OS_RELEASES.debian);
    chmodSync(dirname(root), 0o755); // ROOT (root's, 0755) can be read, not written
    const refused = runCommand(
      "setpriv",
      [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        executable,
        "agent",
        "install-service",
        "--root",
        root,
        "--state-dir",
        join(folder, "state"),
      ],
      folder,
    );
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr, `cannot write ${join(root, COPY)}: permission denied; run as root (sudo)`);
  });
});

test("the service's loop without an enrollment ends at once with exit 6, one line, and the unit does not restart it", async () => {
  const root = buildMachine(OS_RELEASES.debian);
  const stateDir = newStateDir();
  const loop = Bun.spawn([binary, "agent", "run", "--root", root, "--state-dir", stateDir], {
    stdout: "pipe",
    stderr: "pipe",
  });
  // It used to try again every minute, forever: stopped here after 20 s.
  const timer = setTimeout(() => loop.kill(), 20_000);
  const [code, stderr] = await Promise.all([loop.exited, new Response(loop.stderr).text()]);
  clearTimeout(timer);
  expect(code).toBe(6);
  expectOneLine(
    stderr,
    `${stateDir} holds no enrollment: the service stops (after bulwark agent enroll, systemctl restart bulwark-agent)`,
  );
  expect(SHIPPED_UNIT.split("\n")).toContain(`RestartPreventExitStatus=${code}`);
}, 30_000);
