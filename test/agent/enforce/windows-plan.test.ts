/**
 * The Windows planner: each setting's outcome on Windows and the registry values it changes, from a
 * machine state as readWindowsMachineState gives it. The same plans, applied, are proven under Wine by
 * test/binary/agent-windows.test.ts; these cover what Wine cannot stage (WireGuard for Windows, an
 * administrator's own values, the kill switch).
 */
import { describe, expect, test } from "bun:test";
import { emptyJournal, type Journal } from "../../../src/agent/enforce/journal";
import type { SettingPlan } from "../../../src/agent/enforce/plan";
import { WINDOWS_SUPPORT } from "../../../src/agent/enforce/platform-support";
import { POLICY_SETTINGS } from "../../../src/agent/enforce/settings";
import { checkWindowsJournal } from "../../../src/agent/windows/enforce";
import {
  planWindowsEnforcement,
  registryId,
  type WindowsMachineState,
  windowsTunnelSettings,
} from "../../../src/agent/windows/plan";
import type { RegistryValue } from "../../../src/agent/windows/registry";
import {
  ALLOWED_DEVICE_CLASSES,
  ALLOWED_DEVICE_IDS,
  DEVICE_INSTALL_RESTRICTIONS,
  REMOVABLE_DISKS_POLICY,
  USBSTOR_SERVICE,
  windowsFolders,
} from "../../../src/agent/windows/settings";
import type { PolicyData } from "../../../src/domain/policies/policy-document";
import { DEVICE_KEYS, policyWith, vpnSettings } from "./enforce-fixtures";

const FOLDERS = windowsFolders("C:\\ProgramData\\Bulwark", {
  SystemDrive: "C:",
  SystemRoot: "C:\\Windows",
  ProgramFiles: "C:\\Program Files",
});

function machine(changes: Partial<WindowsMachineState> = {}, values: [string, string, RegistryValue][] = []) {
  const registry = new Map<string, RegistryValue | null>();
  registry.set(registryId(USBSTOR_SERVICE, "Start"), { type: "REG_DWORD", data: "0x3" });
  for (const [key, name, value] of values) registry.set(registryId(key, name), value);
  return {
    files: { [FOLDERS.hosts]: { text: "127.0.0.1 localhost\r\n", mode: 0o666 }, [FOLDERS.wireguard]: null },
    journal: emptyJournal(),
    tunnel: "absent" as const,
    usbguardInstalled: false,
    registry,
    usbstorPresent: true,
    wireguardInstalled: true,
    ...changes,
  };
}

function plan(
  policy: PolicyData,
  state = machine(),
  vpn = vpnSettings(),
  noTunnel = false,
): Map<string, SettingPlan> {
  const plans = planWindowsEnforcement({
    policy,
    vpn,
    facts: {},
    options: { noTunnel, wireGuardPrivateKey: DEVICE_KEYS.privateKey },
    machine: state,
    folders: FOLDERS,
  });
  return new Map(plans.map((entry) => [entry.setting, entry]));
}

describe("the Windows planner", () => {
  test("every policy setting has an outcome, and the unsupported ones say why in the console's words", () => {
    const plans = plan(policyWith({}));
    for (const setting of POLICY_SETTINGS) expect(plans.has(setting)).toBe(true);
    expect(plans.get("dlp.screenshot_allowed")).toMatchObject({
      outcome: "unsupported",
      detail: WINDOWS_SUPPORT["dlp.screenshot_allowed"].how,
    });
  });

  test("external storage blocked: USBSTOR Start 4 and the removable-disk policy, as Intune writes them", () => {
    const storage = plan(policyWith({ storage: { external_storage_allowed: false } })).get(
      "storage.external_storage_allowed",
    );
    expect(storage?.outcome).toBe("enforced");
    expect(storage?.registry).toEqual([
      {
        key: USBSTOR_SERVICE,
        name: "Start",
        before: { type: "REG_DWORD", data: "0x3" },
        after: { type: "REG_DWORD", data: "0x4" },
        release: false,
      },
      {
        key: REMOVABLE_DISKS_POLICY,
        name: "Deny_Read",
        before: null,
        after: { type: "REG_DWORD", data: "0x1" },
        release: false,
      },
      {
        key: REMOVABLE_DISKS_POLICY,
        name: "Deny_Write",
        before: null,
        after: { type: "REG_DWORD", data: "0x1" },
        release: false,
      },
    ]);
    // A machine without the USB storage driver's service gets no service key made up for it.
    const without = plan(
      policyWith({ storage: { external_storage_allowed: false } }),
      machine({ usbstorPresent: false }),
    ).get("storage.external_storage_allowed");
    expect(without?.registry?.map((change) => change.name)).toEqual(["Deny_Read", "Deny_Write"]);
    expect(without?.detail).toContain("no USBSTOR driver service");
  });

  test("USB blocked: deny unspecified devices, allow the whitelist's hardware ids and the classes' setup classes", () => {
    const usb = plan(
      policyWith({
        usb: { allowed: false, whitelist: ["046d:c52b", "not-an-id"], allowed_classes: ["hid", "other"] },
      }),
    );
    const written = Object.fromEntries(
      (usb.get("usb.allowed")?.registry ?? []).map((change) => [
        `${change.key}\\${change.name}`,
        change.after?.data,
      ]),
    );
    expect(written).toMatchObject({
      [`${DEVICE_INSTALL_RESTRICTIONS}\\DenyUnspecified`]: "0x1",
      [`${DEVICE_INSTALL_RESTRICTIONS}\\AllowDeviceIDs`]: "0x1",
      [`${ALLOWED_DEVICE_IDS}\\1`]: "USB\\VID_046D&PID_C52B",
      // USB hubs and controllers first, then HID, keyboards and mice.
      [`${ALLOWED_DEVICE_CLASSES}\\1`]: "{36fc9e60-c465-11cf-8056-444553540000}",
      [`${ALLOWED_DEVICE_CLASSES}\\2`]: "{745a17a0-74d3-11d0-b6fe-00a0c9053d92}",
    });
    // WireGuard for Windows' tunnel adapters always, so that the tunnel can start; the bad entry is left out.
    expect(written[`${ALLOWED_DEVICE_IDS}\\2`]).toBe("WireGuard");
    expect(written[`${ALLOWED_DEVICE_IDS}\\3`]).toBe("Wintun");
    expect(written[`${ALLOWED_DEVICE_IDS}\\4`]).toBeUndefined();
    expect(usb.get("usb.whitelist")?.detail).toContain("1 entry is no vendor:product and left out");
    expect(usb.get("usb.allowed_classes")?.detail).toContain("other names no setup class");
    // Audit only writes nothing and blocks nothing.
    const audit = plan(policyWith({ usb: { allowed: false, audit_only: true } })).get("usb.allowed");
    expect(audit).toMatchObject({ outcome: "reported", registry: [] });
  });

  test("a value the agent no longer wants gets back what the journal found, and an administrator's list value too", () => {
    const journal: Journal = {
      ...emptyJournal(),
      registry: [
        { key: DEVICE_INSTALL_RESTRICTIONS, name: "DenyUnspecified", original: null, created_keys: [] },
        {
          key: ALLOWED_DEVICE_IDS,
          name: "1",
          original: { type: "REG_SZ", data: "USB\\VID_1234&PID_0001" },
          created_keys: [],
        },
        { key: ALLOWED_DEVICE_IDS, name: "2", original: null, created_keys: [] },
      ],
    };
    const state = machine({ journal }, [
      [DEVICE_INSTALL_RESTRICTIONS, "DenyUnspecified", { type: "REG_DWORD", data: "0x1" }],
      [ALLOWED_DEVICE_IDS, "1", { type: "REG_SZ", data: "USB\\VID_046D&PID_C52B" }],
      [ALLOWED_DEVICE_IDS, "2", { type: "REG_SZ", data: "USB\\VID_05AC&PID_12A8" }],
    ]);
    const changes = plan(policyWith({}), state).get("usb.allowed")?.registry ?? [];
    expect(changes.filter((change) => change.release)).toEqual([
      {
        key: DEVICE_INSTALL_RESTRICTIONS,
        name: "DenyUnspecified",
        before: { type: "REG_DWORD", data: "0x1" },
        after: null,
        release: true,
      },
      {
        key: ALLOWED_DEVICE_IDS,
        name: "1",
        before: { type: "REG_SZ", data: "USB\\VID_046D&PID_C52B" },
        after: { type: "REG_SZ", data: "USB\\VID_1234&PID_0001" },
        release: true,
      },
      {
        key: ALLOWED_DEVICE_IDS,
        name: "2",
        before: { type: "REG_SZ", data: "USB\\VID_05AC&PID_12A8" },
        after: null,
        release: true,
      },
    ]);
  });

  test("the tunnel: installed as WireGuard for Windows' service, failed without it, written only with --no-tunnel", () => {
    const policy = policyWith({});
    expect(plan(policy).get("tunnel")).toMatchObject({ outcome: "enforced", tunnel: ["up"] });
    const missing = plan(policy, machine({ wireguardInstalled: false })).get("tunnel");
    expect(missing?.outcome).toBe("failed");
    expect(missing?.detail).toContain("WireGuard for Windows is not installed");
    expect(missing?.changes).toEqual([]);
    const written = plan(policy, machine({ wireguardInstalled: false }), vpnSettings(), true).get("tunnel");
    expect(written).toMatchObject({ outcome: "enforced", tunnel: [] });
    expect(written?.changes[0]?.path).toBe("/ProgramData/Bulwark/bulwark.conf");
    expect(plan(policy, machine({ tunnel: "other" })).get("tunnel")?.outcome).toBe("failed");
  });

  test("always-on VPN: WireGuard's kill switch when the tunnel routes 0.0.0.0/0, failed when it cannot be, off by splitting /0", () => {
    const fullTunnel = vpnSettings({ allowed_ips: ["0.0.0.0/0", "::/0"] });
    const alwaysOn = policyWith({ network: { vpn_always_on: true } });
    expect(plan(alwaysOn, machine(), fullTunnel).get("network.vpn_always_on")?.outcome).toBe("enforced");
    const split = plan(alwaysOn).get("network.vpn_always_on");
    expect(split?.outcome).toBe("failed");
    expect(split?.detail).toContain("route 10.100.0.0/16");
    // The kill switch is the tunnel service's: no service, no kill switch, whatever the routes.
    const noWireGuard = plan(alwaysOn, machine({ wireguardInstalled: false }), fullTunnel).get(
      "network.vpn_always_on",
    );
    expect(noWireGuard?.outcome).toBe("failed");
    expect(noWireGuard?.detail).toContain("WireGuard for Windows is not installed");
    const notInstalled = plan(alwaysOn, machine(), fullTunnel, true).get("network.vpn_always_on");
    expect(notInstalled?.detail).toBe(
      "not in effect: the kill switch is the tunnel service's, and the tunnel is not installed (--no-tunnel)",
    );
    // Not wanted: the same routes without exactly /0, so WireGuard for Windows keeps its kill switch off.
    expect(windowsTunnelSettings(fullTunnel, false).allowed_ips).toEqual([
      "0.0.0.0/1",
      "128.0.0.0/1",
      "::/1",
      "8000::/1",
    ]);
    const conf = plan(policyWith({}), machine(), fullTunnel).get("tunnel")?.changes[0]?.after ?? "";
    expect(conf).toContain("AllowedIPs = 0.0.0.0/1, 128.0.0.0/1, ::/1, 8000::/1");
    const kept = plan(alwaysOn, machine(), fullTunnel).get("tunnel")?.changes[0]?.after ?? "";
    expect(kept).toContain("AllowedIPs = 0.0.0.0/0, ::/0");
  });
});

describe("a journal that is not the agent's", () => {
  test("one naming a value or file the agent never changes is refused before anything is undone", async () => {
    const planted: Journal = {
      ...emptyJournal(),
      registry: [
        {
          key: "HKLM\\SYSTEM\\CurrentControlSet\\Services\\Spooler",
          name: "ImagePath",
          original: { type: "REG_EXPAND_SZ", data: "C:\\Users\\Public\\evil.exe" },
          created_keys: [],
        },
      ],
    };
    expect(() => checkWindowsJournal(planted, FOLDERS)).toThrow(
      "the enforcement journal names what the agent never changes (HKLM\\SYSTEM\\CurrentControlSet\\Services\\Spooler\\ImagePath)",
    );
    const file: Journal = {
      format: 1,
      files: [{ path: "/Windows/System32/config/SAM", kind: "whole", original: null, created_dirs: [] }],
    };
    expect(() => checkWindowsJournal(file, FOLDERS)).toThrow("/Windows/System32/config/SAM");
    const created: Journal = {
      ...emptyJournal(),
      registry: [
        { key: USBSTOR_SERVICE, name: "Start", original: null, created_keys: ["HKLM\\SYSTEM\\Setup"] },
      ],
    };
    expect(() => checkWindowsJournal(created, FOLDERS)).toThrow("USBSTOR\\Start");
    // The agent's own entries pass.
    const own: Journal = {
      ...emptyJournal(),
      registry: [
        {
          key: USBSTOR_SERVICE,
          name: "Start",
          original: { type: "REG_DWORD", data: "0x3" },
          created_keys: [],
        },
        {
          key: ALLOWED_DEVICE_IDS,
          name: "2",
          original: null,
          created_keys: [DEVICE_INSTALL_RESTRICTIONS, ALLOWED_DEVICE_IDS],
        },
      ],
    };
    expect(() => checkWindowsJournal(own, FOLDERS)).not.toThrow();
  });
});
