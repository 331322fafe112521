/**
 * The Windows agent, `bulwark-windows-x64.exe`, built from the same source by the same function as
 * `npm run build`, run under Debian's Wine against a real `bulwark serve` on this machine. Wine gives
 * the executable a Windows of its own (a throwaway prefix): its registry (read back here with Wine's
 * `reg query`), its C: drive with the hosts file, its user profile. What Wine cannot show (the service
 * manager, BitLocker, the WireGuard driver, whether Windows honours the policies) is said in
 * docs/agent.md as not yet tested on Windows.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  buildBinary,
  callServer,
  type RunningServer,
  runCommand,
  startAgentServer,
  windowsExecutablePath,
} from "../helpers/binary";
import {
  createWinePrefix,
  queryRegistry,
  removeWinePrefix,
  runUnderWine,
  stopWine,
  type WinePrefix,
  windowsPathOf,
} from "../helpers/wine";

const ADMIN = { email: "windows-admin@example.com", password: "correct-horse-battery" };
const USBSTOR = "HKLM\\SYSTEM\\CurrentControlSet\\Services\\USBSTOR";
const REMOVABLE_DISKS =
  "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\RemovableStorageDevices\\{53f5630d-b6bf-11d0-94f2-00a0c91efb8b}";
const RESTRICTIONS = "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\DeviceInstall\\Restrictions";
const BLOCKING = {
  storage: { external_storage_allowed: false },
  network: { blocked_domains: ["tracker.example.net"] },
  usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid"], audit_only: false },
  wipe: { work_paths: ["~/Work"] },
};
const ALLOWING = {
  storage: { external_storage_allowed: true },
  network: { blocked_domains: [] },
  usb: { allowed: true, whitelist: [], allowed_classes: [], audit_only: false },
  wipe: { work_paths: ["~/Work"] },
};

let server: RunningServer;
let adminToken: string;
let executable: string;
let linuxBinary: string;
let prefix: WinePrefix;
let policyId: string;
let hostsPath: string;
let hostsBefore: string;

beforeAll(async () => {
  const [binary, windows] = await Promise.all([buildBinary(), windowsExecutablePath()]);
  executable = windows;
  linuxBinary = binary;
  ({ server, adminToken } = await startAgentServer(binary, "bulwark-agent-windows-", ADMIN));
  const policy = await callServer(server, "GET", "/api/v1/policies/default", adminToken);
  policyId = policy.id;
  await setPolicy(BLOCKING);
  prefix = createWinePrefix();
  // The USB storage driver's service as Windows installs it (Start = 3, on demand); Wine has none.
  const added = await runUnderWine(prefix, [
    "reg",
    "add",
    USBSTOR,
    "/v",
    "Start",
    "/t",
    "REG_DWORD",
    "/d",
    "3",
    "/f",
  ]);
  expect(added.code, added.stderr).toBe(0);
  hostsPath = join(prefix.driveC, "windows", "system32", "drivers", "etc", "hosts");
  hostsBefore = existsSync(hostsPath) ? readFileSync(hostsPath, "utf8") : "";
}, 240_000);

afterEach(() => stopWine(prefix));

afterAll(async () => {
  await server?.stop();
  if (prefix) removeWinePrefix(prefix);
});

async function setPolicy(policyData: unknown) {
  await callServer(server, "PUT", `/api/v1/policies/${policyId}`, adminToken, { policy_data: policyData });
}

/** `bulwark.exe agent ...` in the prefix, as an administrator would run it (Wine runs everything elevated). */
function agent(...args: string[]) {
  return runUnderWine(prefix, [executable, "agent", ...args], { timeoutMs: 180_000 });
}

async function enroll(): Promise<string> {
  const { token } = await callServer<{ token: string }>(
    server,
    "POST",
    "/api/v1/enrollment-tokens",
    adminToken,
    {},
  );
  const enrolled = await agent("enroll", "--server", server.url, "--token", token);
  expect(enrolled.code, enrolled.stderr).toBe(0);
  return enrolled.stdout.trim();
}

async function registryState() {
  return {
    usbstor: await queryRegistry(prefix, USBSTOR, "Start"),
    denyRead: await queryRegistry(prefix, REMOVABLE_DISKS, "Deny_Read"),
    denyWrite: await queryRegistry(prefix, REMOVABLE_DISKS, "Deny_Write"),
    denyUnspecified: await queryRegistry(prefix, RESTRICTIONS, "DenyUnspecified"),
    allowedId: await queryRegistry(prefix, `${RESTRICTIONS}\\AllowDeviceIDs`, "1"),
  };
}

const ORIGINAL_REGISTRY = {
  usbstor: { type: "REG_DWORD", data: "0x3" },
  denyRead: null,
  denyWrite: null,
  denyUnspecified: null,
  allowedId: null,
};

describe("the Windows agent under Wine", () => {
  test("enrolls as a windows device, reports its facts, enforces the policy in the registry and the hosts file, and undoes what a new policy no longer asks", async () => {
    const deviceId = await enroll();
    const device = await callServer(server, "GET", `/api/v1/devices/${deviceId}`, adminToken);
    // Wine set to Windows 10 reports build 18362 (19H1): the agent's version is the registry's numbers.
    expect(device).toMatchObject({
      platform: "windows",
      os_version: expect.stringMatching(/^10\.0\.18362(\.\d+)?$/),
    });

    const facts = await agent("facts", "--json");
    expect(facts.code, facts.stderr).toBe(0);
    const read = JSON.parse(facts.stdout);
    expect(read.os_version).toMatch(/^10\.0\.18362/);
    // Nothing enforced yet: the registry says storage and devices are not blocked.
    expect(read.facts).toMatchObject({ usb_storage_blocked: false, usb_devices_blocked: false });
    // Wine has no BitLocker (no PowerShell CIM): left out, never guessed.
    expect(read.facts.disk_encrypted).toBeUndefined();

    // What the agent read, captured under Wine, gives the same facts read back by the Linux executable.
    const folder = join(mkdtempSync(join(tmpdir(), "bulwark-wine-capture-")), "case");
    const captured = await agent("capture", windowsPathOf(folder));
    expect(captured.code, captured.stderr).toBe(0);
    const replayed = runCommand(
      linuxBinary,
      ["agent", "facts", "--json", "--from-capture", folder],
      tmpdir(),
    );
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual(read);
    rmSync(dirname(folder), { recursive: true, force: true });

    // Without WireGuard for Windows, a full run says the tunnel failed and why (exit 5).
    const noWireGuard = await agent("run", "--once");
    expect(noWireGuard.code).toBe(5);
    expect(noWireGuard.stderr).toContain("tunnel (WireGuard for Windows is not installed");

    const run = await agent("run", "--once", "--no-tunnel");
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(await registryState()).toEqual({
      usbstor: { type: "REG_DWORD", data: "0x4" },
      denyRead: { type: "REG_DWORD", data: "0x1" },
      denyWrite: { type: "REG_DWORD", data: "0x1" },
      denyUnspecified: { type: "REG_DWORD", data: "0x1" },
      allowedId: { type: "REG_SZ", data: "USB\\VID_046D&PID_C52B" },
    });
    const hosts = readFileSync(hostsPath, "utf8");
    expect(hosts).toStartWith(hostsBefore);
    expect(hosts).toContain("0.0.0.0 tracker.example.net");

    const status = await agent("status");
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("storage.external_storage_allowed: enforced");

    const reported = await callServer(server, "GET", `/api/v1/devices/${deviceId}`, adminToken);
    expect(reported.facts).toMatchObject({ usb_storage_blocked: true, usb_devices_blocked: true });
    const outcome = (setting: string) =>
      (reported.enforcement.settings as { setting: string; outcome: string; detail: string }[]).find(
        (entry) => entry.setting === setting,
      );
    expect(outcome("storage.external_storage_allowed")).toMatchObject({ outcome: "enforced" });
    expect(outcome("usb.allowed")).toMatchObject({ outcome: "enforced" });
    expect(outcome("network.blocked_domains")).toMatchObject({ outcome: "enforced" });
    expect(outcome("dlp.screenshot_allowed")).toMatchObject({ outcome: "unsupported" });

    // A dry run plans from the server's policy and prints registry changes, changing nothing.
    await setPolicy(ALLOWING);
    const dry = await agent("run", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `registry ${USBSTOR}\\Start: REG_DWORD 0x4 -> REG_DWORD 0x3 (restored as the agent found it)`,
    );
    expect((await registryState()).usbstor).toEqual({ type: "REG_DWORD", data: "0x4" });

    const again = await agent("run", "--once", "--no-tunnel");
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
    expect(await registryState()).toEqual(ORIGINAL_REGISTRY);
    expect(readFileSync(hostsPath, "utf8")).toBe(hostsBefore);
    // The keys the agent created are gone with their values.
    expect((await runUnderWine(prefix, ["reg", "query", RESTRICTIONS])).code).not.toBe(0);

    await setPolicy(BLOCKING);
    expect((await agent("run", "--once", "--no-tunnel")).code).toBe(0);
    const unenrolled = await agent("unenroll");
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(await registryState()).toEqual(ORIGINAL_REGISTRY);
    expect(readFileSync(hostsPath, "utf8")).toBe(hostsBefore);
    // The device left the server.
    const gone = await fetch(`${server.url}/api/v1/devices/${deviceId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(gone.status).toBe(404);
  }, 600_000);

  test("a wipe erases ~/Work in each user's profile and /Data/x, never where a redirect leads, undoes the enforcement and deletes the identity", async () => {
    await setPolicy({ ...BLOCKING, wipe: { work_paths: ["~/Work", "/Data/x"] } });
    const deviceId = await enroll();
    expect((await agent("run", "--once", "--no-tunnel")).code).toBe(0);
    const drive = prefix.driveC;
    // Wine's one user, named after the account running it, beside its Public folder.
    const user = readdirSync(join(drive, "users")).find((name) => name !== "Public") as string;
    const profile = join(drive, "users", user);
    const home = `C:\\users\\${user}`;
    mkdirSync(join(profile, "Work", "reports"), { recursive: true });
    writeFileSync(join(profile, "Work", "reports", "q3.txt"), "numbers");
    writeFileSync(join(profile, "Work", "notes.txt"), "notes");
    writeFileSync(join(profile, "personal.txt"), "mine");
    mkdirSync(join(drive, "Data", "x"), { recursive: true });
    writeFileSync(join(drive, "Data", "x", "a.txt"), "123");
    mkdirSync(join(drive, "outside", "secret"), { recursive: true });
    writeFileSync(join(drive, "outside", "secret", "credentials"), "not yours");
    // A Unix symlink, which Wine shows to Windows programs as a plain folder: lstat cannot tell, the real
    // path can, as with a junction to a volume on Windows.
    symlinkSync(join(drive, "outside", "secret"), join(profile, "Work", "evil"));

    const { wipe_id } = await callServer<{ wipe_id: string }>(
      server,
      "POST",
      `/api/v1/devices/${deviceId}/wipe`,
      adminToken,
      { reason: "laptop stolen" },
    );
    const run = await agent("run", "--once", "--no-tunnel");
    expect(run.stderr).toContain("wiped (laptop stolen): 3 files (15 bytes) erased in 2 of 2 work paths");
    expect(readdirSync(join(profile, "Work"))).toEqual(["evil"]);
    expect(readdirSync(join(drive, "Data", "x"))).toEqual([]);
    expect(readFileSync(join(drive, "outside", "secret", "credentials"), "utf8")).toBe("not yours");
    expect(readFileSync(join(profile, "personal.txt"), "utf8")).toBe("mine");
    expect(await registryState()).toEqual(ORIGINAL_REGISTRY);
    expect(readFileSync(hostsPath, "utf8")).toBe(hostsBefore);

    const wipe = await callServer(server, "GET", `/api/v1/devices/${deviceId}/wipe/${wipe_id}`, adminToken);
    expect(wipe).toMatchObject({ status: "completed", report: { files: 3, bytes: 15 } });
    expect(wipe.report.paths).toContainEqual({
      path: `${home}\\Work`,
      outcome: "erased",
      files: 2,
      bytes: 12,
      folders: 1,
      detail: `left alone: ${home}\\Work\\evil (leads elsewhere: a mounted volume or another reparse point)`,
    });
    const state = join(drive, "ProgramData", "Bulwark");
    expect(existsSync(join(state, "wg.key"))).toBe(false);
    expect(JSON.parse(readFileSync(join(state, "state.json"), "utf8")).state).toBe("wiped");
  }, 600_000);
});
