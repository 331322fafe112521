/**
 * The Windows facts, read back from capture folders (test/fixtures/windows/captures, each README citing
 * the documentation of its formats) through the same `agent facts --from-capture` path a support case
 * takes, and from captures changed here one reading at a time.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Capture, factsFromCapture } from "../../src/agent/capture";
import { parseRegQuery } from "../../src/agent/windows/registry";

const CAPTURES = join(import.meta.dir, "..", "fixtures", "windows", "captures");
const WINDOWS_11 = join(CAPTURES, "windows11-bitlocker-on-tunnel-up");
const WINDOWS_10 = join(CAPTURES, "windows10-bitlocker-off-tunnel-down");
const folders: string[] = [];

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A copy of a capture with `change` applied to its capture.json. */
function changed(source: string, change: (capture: Capture) => void): string {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-capture-"));
  folders.push(folder);
  cpSync(source, folder, { recursive: true });
  const capture = JSON.parse(readFileSync(join(folder, "capture.json"), "utf8")) as Capture;
  change(capture);
  writeFileSync(join(folder, "capture.json"), JSON.stringify(capture));
  return folder;
}

/** The capture's reading of a program whose command line contains `word`. */
function reading(capture: Capture, word: string) {
  const found = capture.programs.find((entry) => entry.argv.some((part) => part.includes(word)));
  if (!found) throw new Error(`no reading of ${word}`);
  return found;
}

describe("Windows facts from captures", () => {
  test("Windows 11 with BitLocker on and the tunnel up: every fact, Windows 11 named by its build", async () => {
    const collected = await factsFromCapture(WINDOWS_11);
    expect(collected.os_version).toBe("10.0.22631.4460");
    expect(collected.notes.os_version).toStartWith("Windows 11 23H2 (build 22631)");
    expect(collected.facts).toEqual({
      disk_encrypted: true,
      vpn_connected: true,
      usb_storage_blocked: true,
      usb_devices_blocked: true,
      screenshots_blocked: false,
      firewall_enabled: true,
      screen_lock_enabled: true,
    });
    expect(collected.notes.vpn_connected).toContain("latest handshake was 42 s ago");
    expect(collected.notes.screen_lock_enabled).toContain("900 s");
  });

  test("Windows 10 with BitLocker off, no tunnel, a firewall profile off", async () => {
    const collected = await factsFromCapture(WINDOWS_10);
    expect(collected.os_version).toBe("10.0.19045.5131");
    expect(collected.notes.os_version).toStartWith("Windows 10 Pro 22H2");
    expect(collected.facts).toEqual({
      disk_encrypted: false,
      vpn_connected: false,
      usb_storage_blocked: false,
      usb_devices_blocked: false,
      screenshots_blocked: false,
      firewall_enabled: false,
      screen_lock_enabled: false,
    });
    expect(collected.notes.firewall_enabled).toBe("the firewall is off in the public profile");
    expect(collected.notes.vpn_connected).toContain("no WireGuardTunnel$bulwark service");
  });

  test("a tunnel whose last handshake is older than 180 s is not connected; a stopped service neither", async () => {
    const stale = changed(WINDOWS_11, (capture) => {
      const handshake = reading(capture, "latest-handshakes");
      const at = Date.parse(capture.captured_at) / 1000 - 600;
      handshake.stdout = handshake.stdout.replace(/\t\d+/, `\t${at}`);
    });
    expect((await factsFromCapture(stale)).facts.vpn_connected).toBe(false);
    const stopped = changed(WINDOWS_11, (capture) => {
      const service = reading(capture, "WireGuardTunnel$bulwark");
      service.stdout = service.stdout.replace("4  RUNNING", "1  STOPPED");
    });
    const collected = await factsFromCapture(stopped);
    expect(collected.facts.vpn_connected).toBe(false);
    expect(collected.notes.vpn_connected).toContain("not running (state 1)");
  });

  test("what cannot be read is left out with the reason, never guessed", async () => {
    const noPowerShell = changed(WINDOWS_11, (capture) => {
      capture.programs = capture.programs.filter((entry) => entry.argv[0] !== "powershell");
    });
    let collected = await factsFromCapture(noPowerShell);
    expect(collected.facts.disk_encrypted).toBeUndefined();
    expect(collected.notes.disk_encrypted).toBe(
      "PowerShell is not installed: BitLocker's state cannot be read",
    );

    const locked = changed(WINDOWS_11, (capture) => {
      const cim = reading(capture, "Win32_EncryptableVolume");
      cim.stdout = cim.stdout.replace('"ProtectionStatus":1', '"ProtectionStatus":2');
    });
    collected = await factsFromCapture(locked);
    expect(collected.facts.disk_encrypted).toBeUndefined();
    expect(collected.notes.disk_encrypted).toContain("is 2 (2: locked or unknown)");

    const home = changed(WINDOWS_11, (capture) => {
      reading(capture, "Win32_EncryptableVolume").stdout = "";
    });
    expect((await factsFromCapture(home)).notes.disk_encrypted).toContain("an edition without BitLocker");

    const noVersion = changed(WINDOWS_11, (capture) => {
      capture.programs = capture.programs.filter(
        (entry) => !entry.argv.some((part) => part.endsWith("CurrentVersion")),
      );
    });
    collected = await factsFromCapture(noVersion);
    expect(collected.os_version).toBeUndefined();
    expect(collected.notes.os_version).toContain("exit 127");
  });

  test("a Group Policy firewall setting wins over the local one", async () => {
    const policyOff = changed(WINDOWS_11, (capture) => {
      const policy = capture.programs.find((entry) =>
        entry.argv[2]?.endsWith("WindowsFirewall\\DomainProfile"),
      );
      if (!policy) throw new Error("no domain policy reading");
      Object.assign(policy, {
        code: 0,
        stdout:
          "\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\DomainProfile\r\n    EnableFirewall    REG_DWORD    0x0\r\n",
        stderr: "",
      });
    });
    const collected = await factsFromCapture(policyOff);
    expect(collected.facts.firewall_enabled).toBe(false);
    expect(collected.notes.firewall_enabled).toBe("the firewall is off in the domain profile");
  });
});

describe("reg query's output", () => {
  test("values with empty data, spaces in names, the default value and subkeys are read as printed", () => {
    const output = [
      "",
      "HKEY_LOCAL_MACHINE\\SOFTWARE\\Example",
      "    (Default)    REG_SZ    (value not set)",
      "    Registered Owner    REG_SZ    ",
      "    Paths    REG_MULTI_SZ    C:\\a\\0C:\\b",
      "    Start    REG_DWORD    0x4",
      "",
      "HKEY_LOCAL_MACHINE\\SOFTWARE\\Example\\Child",
      "HKEY_LOCAL_MACHINE\\SOFTWARE\\Example\\Other",
      "",
    ].join("\r\n");
    const keys = parseRegQuery(output);
    const key = keys.get("HKEY_LOCAL_MACHINE\\SOFTWARE\\Example");
    expect(key?.subkeys).toEqual(["Child", "Other"]);
    expect(Object.fromEntries(key?.values ?? [])).toEqual({
      "(Default)": { type: "REG_SZ", data: "(value not set)" },
      "Registered Owner": { type: "REG_SZ", data: "" },
      Paths: { type: "REG_MULTI_SZ", data: "C:\\a\\0C:\\b" },
      Start: { type: "REG_DWORD", data: "0x4" },
    });
  });
});
