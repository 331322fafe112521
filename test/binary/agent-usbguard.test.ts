/**
 * `usb.allowed = false` is judged by what usbguard's own daemon runs, not by the file the agent wrote:
 * from the built executable against a real `bulwark serve` and usbguard's real daemon (from Debian's
 * package, started in a mount namespace of its own with no USB bus, so it can block nothing on this
 * machine), reading the agent's rules folder under ROOT. Stopped, the setting fails saying how to start
 * it and the device is non-compliant; running with the rules, both hold; stopped again, both fall back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ensureUsbguardRuleParser } from "../../scripts/test-tools";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";
import { buildBinary, callServer, type RunningServer, runCommand, startAgentServer } from "../helpers/binary";

const ADMIN = { email: "usbguard-admin@example.com", password: "correct-horse-battery" };

let binary: string;
let server: RunningServer;
let adminToken: string;
/** The unpacked usbguard package: usr/bin/usbguard (the IPC client) and usr/sbin/usbguard-daemon. */
let usbguard: string;
let daemon: ReturnType<typeof Bun.spawn> | null = null;

beforeAll(async () => {
  binary = await buildBinary();
  usbguard = dirname(dirname(dirname(ensureUsbguardRuleParser())));
  ({ server, adminToken } = await startAgentServer(binary, "bulwark-agent-usbguard-", ADMIN));
}, 120_000);

afterAll(async () => {
  await stopDaemon();
  await server?.stop();
  removeMachines();
});

/** Starts usbguard's daemon on ROOT's rules folder; resolves once `usbguard list-rules` answers. */
async function startDaemon(root: string) {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-usbguard-"));
  const ruleFile = join(folder, "rules.conf");
  writeFileSync(ruleFile, "", { mode: 0o600 });
  const config = join(folder, "usbguard-daemon.conf");
  writeFileSync(
    config,
    [
      `RuleFile=${ruleFile}`,
      `RuleFolder=${join(root, "etc/usbguard/rules.d")}/`,
      "ImplicitPolicyTarget=block",
      "PresentDevicePolicy=keep",
      "PresentControllerPolicy=keep",
      "InsertedDevicePolicy=apply-policy",
      "RestoreControllerDeviceState=false",
      "DeviceManagerBackend=uevent",
      "IPCAllowedUsers=root",
      "DeviceRulesWithPort=false",
      "AuditBackend=FileAudit",
      `AuditFilePath=${join(folder, "audit.log")}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  // Its own mount namespace, where /sys/bus holds an empty USB bus: it manages no device of this machine.
  daemon = Bun.spawn(
    [
      "unshare",
      "-m",
      "--propagation",
      "private",
      "sh",
      "-c",
      `mount -t tmpfs none /sys/bus && mkdir -p /sys/bus/usb/devices && exec ${join(usbguard, "usr/sbin/usbguard-daemon")} -c ${config}`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  for (let attempt = 0; attempt < 100; attempt++) {
    if (Bun.spawnSync([join(usbguard, "usr/bin/usbguard"), "list-rules"]).exitCode === 0) return;
    await Bun.sleep(100);
  }
  throw new Error(
    `usbguard-daemon did not answer: ${await new Response(daemon.stderr as ReadableStream).text()}`,
  );
}

async function stopDaemon() {
  if (!daemon) return;
  daemon.kill("SIGTERM");
  await daemon.exited;
  daemon = null;
}

function agent(root: string, stateDir: string, ...args: string[]) {
  // The usbguard client is found on PATH, as on a machine with the package installed.
  return runCommand(binary, ["agent", ...args, "--root", root, "--state-dir", stateDir], tmpdir(), {
    PATH: `${join(usbguard, "usr/bin")}:${process.env.PATH}`,
  });
}

async function deviceOf(id: string) {
  return await callServer(server, "GET", `/api/v1/devices/${id}`, adminToken);
}

function settingOf(device: { enforcement: { settings: { setting: string }[] } }, setting: string) {
  return device.enforcement.settings.find((entry) => entry.setting === setting);
}

function rulesOf(device: { compliance: { violations: { rule: string }[] } }) {
  return device.compliance.violations.map((violation) => violation.rule);
}

describe("usb.allowed = false, judged by usbguard's daemon", () => {
  test("not running: failed with how to start it; running with the rules: enforced and compliant; stopped: failed again", async () => {
    const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
      files: {
        "etc/hostname": "usbguard-laptop\n",
        "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
        "etc/hosts": "127.0.0.1 localhost\n",
      },
    });
    // usbguard is installed on the machine (its daemon's program is where the package puts it).
    mkdirSync(join(root, "usr/sbin"), { recursive: true });
    writeFileSync(join(root, "usr/sbin/usbguard-daemon"), "");
    chmodSync(join(root, "usr/sbin/usbguard-daemon"), 0o755);
    const stateDir = join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "state");
    const { token } = await callServer<{ token: string }>(
      server,
      "POST",
      "/api/v1/enrollment-tokens",
      adminToken,
      {},
    );
    const enrolled = agent(root, stateDir, "enroll", "--server", server.url, "--token", token);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const id = enrolled.stdout.trim();

    // The default policy blocks USB devices (usb.allowed false) and storage.
    const stopped = agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(stopped.code, stopped.stderr).toBe(5);
    expect(stopped.stderr).toContain(
      "usb.allowed (usbguard is installed but not running: systemctl enable --now usbguard",
    );
    let device = await deviceOf(id);
    expect(settingOf(device, "usb.allowed")).toMatchObject({ outcome: "failed" });
    expect(settingOf(device, "usb.whitelist")).toMatchObject({ outcome: "failed" });
    expect(device.facts).toMatchObject({ usb_devices_blocked: false, usb_storage_blocked: true });
    expect(rulesOf(device)).toContain("usb.allowed");
    expect(rulesOf(device)).not.toContain("storage.external_storage_allowed");

    await startDaemon(root);
    const running = agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(running.code, running.stderr).toBe(0);
    device = await deviceOf(id);
    expect(settingOf(device, "usb.allowed")).toMatchObject({
      outcome: "enforced",
      detail: expect.stringContaining("usbguard's daemon runs them"),
    });
    expect(device.facts).toMatchObject({ usb_devices_blocked: true });
    expect(rulesOf(device)).not.toContain("usb.allowed");
    const facts = agent(root, stateDir, "facts");
    expect(facts.stdout).toContain("usb_devices_blocked: true (usbguard's daemon runs the agent's");

    await stopDaemon();
    const again = agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(again.code, again.stderr).toBe(5);
    device = await deviceOf(id);
    expect(settingOf(device, "usb.allowed")).toMatchObject({ outcome: "failed" });
    expect(device.facts).toMatchObject({ usb_devices_blocked: false });
    expect(rulesOf(device)).toContain("usb.allowed");
  }, 60_000);
});
