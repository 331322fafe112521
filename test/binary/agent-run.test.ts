/**
 * `bulwark agent run --once`, `--dry-run` and `status`, from the built executable against a real
 * `bulwark serve`, on a prepared machine: the policy's files are written under ROOT and reported, the
 * server sees the applied version and judges the facts the enforcement changed, a dry run changes
 * nothing, and a server that is away leaves the last policy in force and says why in `status`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines, snapshot } from "../helpers/agent-machine";
import {
  buildBinary,
  callServer,
  expectOneLine,
  type RunningServer,
  runCommand,
  startAgentServer,
} from "../helpers/binary";

const ADMIN = { email: "run-admin@example.com", password: "correct-horse-battery" };
const HOSTS = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n";

let binary: string;
let server: RunningServer;
let adminToken: string;

beforeAll(async () => {
  binary = await buildBinary();
  ({ server, adminToken } = await startAgentServer(binary, "bulwark-agent-run-", ADMIN));
  // Storage blocked and one domain blocked, on top of the default policy.
  const policy = await callServer(server, "GET", "/api/v1/policies/default", adminToken);
  await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, adminToken, {
    policy_data: {
      storage: { external_storage_allowed: false },
      network: { blocked_domains: ["tracker.example.net"] },
      wipe: { work_paths: ["/srv/work"] },
    },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeMachines();
});

/** A machine enrolled from a fresh state folder: its ROOT, state folder and device id. */
async function enrolledMachine() {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/hostname": "run-laptop\n",
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
      "etc/hosts": HOSTS,
    },
  });
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
  return { root, stateDir, deviceId: enrolled.stdout.trim() };
}

function agent(root: string, stateDir: string, ...args: string[]) {
  return runCommand(binary, ["agent", ...args, "--root", root, "--state-dir", stateDir], tmpdir());
}

describe("bulwark agent run --once", () => {
  test("enforces the policy under ROOT, reports it, and the server judges the machine as it is now", async () => {
    const machine = await enrolledMachine();
    const run = agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel");
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });

    expect(readFileSync(join(machine.root, "etc/modprobe.d/bulwark.conf"), "utf8")).toContain(
      "install usb-storage /bin/false",
    );
    const hosts = readFileSync(join(machine.root, "etc/hosts"), "utf8");
    expect(hosts.startsWith(HOSTS)).toBe(true);
    expect(hosts).toContain("0.0.0.0 tracker.example.net");
    expect(statSync(join(machine.root, "etc/wireguard/bulwark.conf")).mode & 0o777).toBe(0o600);

    // The server has the applied version, and judges the storage rule now in force (usb_storage_blocked).
    const device = await callServer(server, "GET", `/api/v1/devices/${machine.deviceId}`, adminToken);
    const policy = await callServer(server, "GET", `/api/v1/devices/${machine.deviceId}/policy`, adminToken);
    expect(device.agent_version).toBe("0.1.0");
    // The enforcement the agent reported is on the device's page.
    expect(device.enforcement.settings).toContainEqual(
      expect.objectContaining({ setting: "storage.external_storage_allowed", outcome: "enforced" }),
    );
    expect(device.facts).toMatchObject({ disk_encrypted: true, usb_storage_blocked: true });
    const rules = device.compliance.violations.map((violation: { rule: string }) => violation.rule);
    expect(rules).not.toContain("storage.external_storage_allowed");
    expect(rules).not.toContain("storage.encryption_required");
    // Nothing runs usbguard on this machine: the rules file alone does not make USB devices blocked.
    expect(device.facts.usb_devices_blocked).toBe(false);
    expect(rules).toContain("usb.allowed");
    const logs = await callServer(
      server,
      "GET",
      `/api/v1/devices/${machine.deviceId}/logs?event=policy.applied`,
      adminToken,
    );
    expect(logs.data[0]?.details?.version).toBe(policy.version);

    const status = agent(machine.root, machine.stateDir, "status", "--json");
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout);
    expect(report).toMatchObject({
      device_id: machine.deviceId,
      state: "enrolled",
      last_error: null,
      applied_policy_version: policy.version,
      compliance: { status: device.compliance.status },
    });
    const outcome = (setting: string) =>
      report.enforcement.find((entry: { setting: string }) => entry.setting === setting)?.outcome;
    expect(outcome("storage.external_storage_allowed")).toBe("enforced");
    expect(outcome("network.blocked_domains")).toBe("enforced");
    expect(outcome("dlp.screenshot_allowed")).toBe("unsupported");
    expect(outcome("storage.encryption_required")).toBe("reported");
  });

  test("a setting that fails (wg-quick cannot bring the tunnel up): exit 5, one line naming it and why", async () => {
    const machine = await enrolledMachine();
    // wg-quick as a kernel without WireGuard answers it; everything else is enforced.
    const tools = mkdtempSync(join(tmpdir(), "bulwark-tools-"));
    writeFileSync(
      join(tools, "wg-quick"),
      "#!/bin/sh\necho 'RTNETLINK answers: Operation not supported' >&2\nexit 1\n",
      { mode: 0o755 },
    );
    const run = runCommand(
      binary,
      ["agent", "run", "--once", "--root", machine.root, "--state-dir", machine.stateDir],
      tmpdir(),
      { PATH: tools },
    );
    expect(run.code, run.stderr).toBe(5);
    expectOneLine(run.stderr, "; 1 setting failed: tunnel (");
    expect(run.stderr).toContain("RTNETLINK answers: Operation not supported");
    expect(run.stderr).toMatch(/^bulwark: checked in; compliance \w+; 1 setting failed/);
    expect(readFileSync(join(machine.root, "etc/modprobe.d/bulwark.conf"), "utf8")).toContain(
      "install usb-storage /bin/false",
    );
    const status = agent(machine.root, machine.stateDir, "status");
    expect(status.stdout).toContain("tunnel: failed (");
  });

  test("--dry-run changes nothing under ROOT, in the state folder or on the server, and says what a run would do", async () => {
    const machine = await enrolledMachine();
    // A first cycle brings the policy; then the policy changes and a dry run shows the change only.
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    const policy = await callServer(server, "GET", "/api/v1/policies/default", adminToken);
    await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, adminToken, {
      policy_data: { network: { blocked_domains: ["tracker.example.net", "ads.example.org"] } },
    });
    try {
      const rootBefore = snapshot(machine.root);
      const stateBefore = snapshot(machine.stateDir);
      const deviceBefore = await callServer(server, "GET", `/api/v1/devices/${machine.deviceId}`, adminToken);
      const logsBefore = await callServer(
        server,
        "GET",
        `/api/v1/devices/${machine.deviceId}/logs`,
        adminToken,
      );
      await Bun.sleep(1100);
      const dry = agent(machine.root, machine.stateDir, "run", "--dry-run", "--no-tunnel");
      expect(dry.code, dry.stderr).toBe(0);
      // The server's current policy, said in the conditional.
      expect(dry.stdout).toContain("+0.0.0.0 ads.example.org");
      expect(dry.stdout).toStartWith("Nothing was changed. What a run would do, setting by setting:\n");
      expect(dry.stdout).toContain("network.blocked_domains: would be enforced: ");
      expect(dry.stderr).toContain("dry run: planned the server's current policy version");
      expect(snapshot(machine.root)).toEqual(rootBefore);
      expect(snapshot(machine.stateDir)).toEqual(stateBefore);
      // No check-in: the server saw nothing (last seen, facts, log as they were).
      const deviceAfter = await callServer(server, "GET", `/api/v1/devices/${machine.deviceId}`, adminToken);
      expect(deviceAfter.last_seen).toBe(deviceBefore.last_seen);
      expect(deviceAfter.enforcement).toEqual(deviceBefore.enforcement);
      const logsAfter = await callServer(
        server,
        "GET",
        `/api/v1/devices/${machine.deviceId}/logs`,
        adminToken,
      );
      expect(logsAfter.total).toBe(logsBefore.total);
    } finally {
      await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, adminToken, {
        policy_data: { network: { blocked_domains: ["tracker.example.net"] } },
      });
    }
  });

  test("a device token that expires within 30 days is replaced at the next cycle, and the new one is what works", async () => {
    const machine = await enrolledMachine();
    const statePath = join(machine.stateDir, "state.json");
    const before = JSON.parse(readFileSync(statePath, "utf8"));
    const soon = new Date(Date.now() + 10 * 24 * 3600 * 1000).toISOString();
    await Bun.write(statePath, JSON.stringify({ ...before, device_token_expires_at: soon }));
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    const after = JSON.parse(readFileSync(statePath, "utf8"));
    expect(after.device_token).not.toBe(before.device_token);
    expect(Date.parse(after.device_token_expires_at)).toBeGreaterThan(Date.now() + 300 * 24 * 3600 * 1000);
    expect(statSync(statePath).mode & 0o777).toBe(0o600);
    const checkIn = await fetch(`${server.url}/api/v1/agent/checkin`, {
      method: "POST",
      headers: { authorization: `Bearer ${after.device_token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(checkIn.status).toBe(200);
    const audit = await callServer(
      server,
      "GET",
      "/api/v1/audit-logs?action=device.token_rotate",
      adminToken,
    );
    expect(audit.data.map((entry: { target: { id: string } }) => entry.target.id)).toContain(
      machine.deviceId,
    );
  });

  test("a server that is away: exit 1 with the reason, the last policy stays in force, status says why", async () => {
    const machine = await enrolledMachine();
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    const enforced = snapshot(machine.root);
    // Point the state at a port where nothing listens, as a server that went away.
    const statePath = join(machine.stateDir, "state.json");
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    await Bun.write(statePath, JSON.stringify({ ...state, server: "http://127.0.0.1:9" }));

    const away = agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel");
    expect(away.code).toBe(1);
    expectOneLine(away.stderr, "the server could not be reached: http://127.0.0.1:9");
    expect(snapshot(machine.root)).toEqual(enforced);
    const status = agent(machine.root, machine.stateDir, "status");
    expect(status.stdout).toContain("Not checking in since");
    expect(status.stdout).toContain("could not be reached");
    expect(JSON.parse(agent(machine.root, machine.stateDir, "status", "--json").stdout)).toMatchObject({
      state: "enrolled",
      last_error: { message: expect.stringContaining("127.0.0.1:9") },
    });
    expect(existsSync(join(machine.stateDir, "wg.key"))).toBe(true);
    // plan answers from local state too: every setting in force already, so no file to change.
    const plan = agent(machine.root, machine.stateDir, "plan", "--json");
    expect(plan.code, plan.stderr).toBe(0);
    const settings = JSON.parse(plan.stdout).settings as {
      setting: string;
      outcome: string;
      files: string[];
    }[];
    expect(settings.find((entry) => entry.setting === "network.blocked_domains")).toMatchObject({
      outcome: "enforced",
      files: [],
    });
    expect(settings.map((entry) => entry.setting)).toContain("dlp.screenshot_allowed");
    expect(snapshot(machine.root)).toEqual(enforced);
  });

  test("two agent processes never change the machine at once: unenroll waits for a cycle in progress", async () => {
    const machine = await enrolledMachine();
    const before = snapshot(machine.root);
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    // Another agent process (a service cycle) holds the state folder: unenroll waits for it.
    const holder = Bun.spawn(["sleep", "30"]);
    writeFileSync(join(machine.stateDir, "lock"), `${holder.pid}\n`, { mode: 0o600 });
    const unenroll = Bun.spawn(
      [binary, "agent", "unenroll", "--root", machine.root, "--state-dir", machine.stateDir],
      { env: { PATH: process.env.PATH ?? "", HOME: tmpdir() }, stdout: "pipe", stderr: "pipe" },
    );
    await Bun.sleep(1500);
    expect(unenroll.exitCode).toBeNull();
    expect(snapshot(machine.root)).not.toEqual(before);
    holder.kill();
    await holder.exited;
    // The holder is gone (as after a crash): its lock is taken over and the unenroll finishes.
    expect(await unenroll.exited).toBe(0);
    expect(snapshot(machine.root)).toEqual(before);
    expect(existsSync(join(machine.stateDir, "lock"))).toBe(false);
  });

  test("a refused check-in: status names the server's request id once", async () => {
    const machine = await enrolledMachine();
    // A token the server never issued, over plain http (no certificate to fall back on): 401.
    const statePath = join(machine.stateDir, "state.json");
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    await Bun.write(statePath, JSON.stringify({ ...state, device_token: `bwd_${"0".repeat(43)}` }));
    const refused = agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel");
    expect(refused.code).toBe(1);
    const requestId = JSON.parse(agent(machine.root, machine.stateDir, "status", "--json").stdout).last_error
      .request_id as string;
    expect(requestId).toBeTruthy();
    const line = agent(machine.root, machine.stateDir, "status")
      .stdout.split("\n")
      .find((text) => text.startsWith("Not checking in since")) as string;
    expect(line).toContain("device_token_invalid");
    expect(line.split(requestId)).toHaveLength(2);
  });

  test("unenroll: the machine ends byte for byte as before enrollment, its service gone too, and the device leaves the server", async () => {
    const machine = await enrolledMachine();
    const before = snapshot(machine.root);
    const installed = agent(machine.root, machine.stateDir, "install-service");
    expect(installed.code, installed.stderr).toBe(0);
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    expect(snapshot(machine.root)).not.toEqual(before);

    const unenrolled = agent(machine.root, machine.stateDir, "unenroll");
    expect({ code: unenrolled.code, stderr: unenrolled.stderr }).toMatchObject({ code: 0 });
    expect(unenrolled.stderr).toContain(
      `Removed ${join(machine.root, "etc/systemd/system/bulwark-agent.service")}`,
    );
    expect(unenrolled.stderr).toContain(`Removed ${join(machine.root, "usr/local/bin/bulwark")}`);
    expect(snapshot(machine.root)).toEqual(before);
    expect(readdirSync(machine.stateDir)).toEqual([]);
    const gone = await fetch(`${server.url}/api/v1/devices/${machine.deviceId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(gone.status).toBe(404);
    const audit = await callServer(server, "GET", "/api/v1/audit-logs?action=device.unenroll", adminToken);
    expect(audit.data.map((entry: { target: { id: string } }) => entry.target.id)).toContain(
      machine.deviceId,
    );
    // Nothing is left to unenroll.
    expect(agent(machine.root, machine.stateDir, "unenroll").code).toBe(2);
  }, 30_000);

  test("a device retired on the server: run says what that likely means and what to do, and unenroll still restores the machine", async () => {
    const machine = await enrolledMachine();
    const before = snapshot(machine.root);
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    await callServer(server, "POST", `/api/v1/devices/${machine.deviceId}/retire`, adminToken, {
      reason: "laptop replaced",
    });

    const run = agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel");
    expect(run.code).toBe(1);
    expectOneLine(run.stderr, "device_token_invalid: invalid device token [request ");
    expect(run.stderr).toContain(
      "; the server no longer knows this device (retired or deleted?): run bulwark agent unenroll, then enroll again",
    );
    const unenrolled = agent(machine.root, machine.stateDir, "unenroll");
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(snapshot(machine.root)).toEqual(before);
  });

  test("a wipe: work folders emptied (a mount inside left alone), enforcement undone, confirmed, identity deleted last", async () => {
    const machine = await enrolledMachine();
    const before = snapshot(machine.root);
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    // The policy's work folder, with files, a folder and another file system mounted in it.
    const work = join(machine.root, "srv/work");
    mkdirSync(join(work, "projects/q3"), { recursive: true });
    writeFileSync(join(work, "projects/q3/plan.txt"), "confidential");
    writeFileSync(join(work, "notes.txt"), "confidential");
    const share = join(work, "share");
    mkdirSync(share);
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "tmpfs", share]);
    expect(mounted.exitCode, mounted.stderr.toString()).toBe(0);
    try {
      writeFileSync(join(share, "on-another-disk.txt"), "not ours to erase");
      const wipe = await callServer(server, "POST", `/api/v1/devices/${machine.deviceId}/wipe`, adminToken, {
        reason: "laptop stolen",
      });

      const run = agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel");
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain("wiped (laptop stolen)");
      expect(readdirSync(work)).toEqual(["share"]);
      expect(readFileSync(join(share, "on-another-disk.txt"), "utf8")).toBe("not ours to erase");
      expect(snapshot(machine.root)).toEqual({
        ...before,
        "srv/work/share/on-another-disk.txt": "644 not ours to erase",
      });
      const polled = await callServer(
        server,
        "GET",
        `/api/v1/devices/${machine.deviceId}/wipe/${wipe.wipe_id}`,
        adminToken,
      );
      expect(polled.status).toBe("completed");
      for (const secret of ["wg.key", "device.key", "device.crt"])
        expect(existsSync(join(machine.stateDir, secret))).toBe(false);
      expect(JSON.parse(agent(machine.root, machine.stateDir, "status", "--json").stdout).state).toBe(
        "wiped",
      );
      // A wiped agent checks in no more.
      expect(agent(machine.root, machine.stateDir, "run", "--once").stderr).toContain("was wiped");
    } finally {
      Bun.spawnSync(["umount", share]);
    }
  });

  test("unenroll while the server is away: restored and kept so (unenroll_pending), the server told once it is back", async () => {
    const machine = await enrolledMachine();
    const before = snapshot(machine.root);
    expect(agent(machine.root, machine.stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    expect(snapshot(machine.root)).not.toEqual(before);
    // The server goes away (the state points at a port where nothing listens).
    const statePath = join(machine.stateDir, "state.json");
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    writeFileSync(statePath, JSON.stringify({ ...state, server: "http://127.0.0.1:9" }));

    const unenrolled = agent(machine.root, machine.stateDir, "unenroll");
    expect(unenrolled.code, unenrolled.stderr).toBe(4);
    expect(unenrolled.stderr).toContain("the machine is restored and nothing is enforced any more");
    expect(snapshot(machine.root)).toEqual(before);
    const pending = JSON.parse(agent(machine.root, machine.stateDir, "status", "--json").stdout);
    expect(pending).toMatchObject({ state: "unenroll_pending", enforcement: [], policy: null });
    expect(agent(machine.root, machine.stateDir, "status").stdout).toContain(
      "Unenrolled here: the machine is restored and nothing is enforced; the server has not been told yet.",
    );

    // The service's next cycles enforce nothing: they only try to tell the server, backing off.
    const retried = agent(machine.root, machine.stateDir, "run", "--once");
    expect(retried.code).toBe(1);
    expect(retried.stderr).toContain("unenroll pending: the machine is restored and nothing is enforced");
    expect(snapshot(machine.root)).toEqual(before);
    const afterTwo = JSON.parse(agent(machine.root, machine.stateDir, "status", "--json").stdout);
    expect(afterTwo.last_error.message).toContain("127.0.0.1:9");
    expect(Date.parse(afterTwo.next_checkin_at)).toBeGreaterThan(Date.now());

    // The server is back: the cycle tells it, and the device and the state are gone.
    const pendingState = JSON.parse(readFileSync(statePath, "utf8"));
    writeFileSync(statePath, JSON.stringify({ ...pendingState, server: state.server }));
    const told = agent(machine.root, machine.stateDir, "run", "--once");
    expect(told.code, told.stderr).toBe(0);
    expect(told.stderr).toContain("the server was told");
    expect(readdirSync(machine.stateDir)).toEqual([]);
    expect(snapshot(machine.root)).toEqual(before);
    const gone = await fetch(`${server.url}/api/v1/devices/${machine.deviceId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(gone.status).toBe(404);
  });

  test("without an enrollment, run and status say so", () => {
    const root = buildMachine(OS_RELEASES.debian);
    const stateDir = join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "none");
    const run = agent(root, stateDir, "run", "--once");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("run bulwark agent enroll first");
    expect(agent(root, stateDir, "status").stdout).toContain("Not enrolled");
  });
});
