/**
 * The facts of a Windows 10/11 machine, each read by a SYSTEM process without an MDM channel: the
 * registry through `reg query` (registry.ts), BitLocker through PowerShell's `Get-CimInstance` as JSON,
 * the WireGuard tunnel through `sc query` and `wg.exe`. Every reading goes through the ProgramRunner, so
 * `agent capture` records exactly what was read and tests replay recorded outputs. A value that cannot be
 * read is left out with the reason, never guessed.
 */
import { type FactReading, firstLine, known, type ProgramRunner, unknown } from "../facts/fact";
import { HANDSHAKE_MAX_AGE_SECONDS, latestHandshake } from "../facts/vpn-connection";
import { dwordOf, type RegistryKey, readRegistryKey, registryValue } from "./registry";
import {
  DEVICE_INSTALL_RESTRICTIONS,
  FIREWALL_POLICY,
  FIREWALL_PROFILES,
  INACTIVITY_POLICY,
  OS_VERSION_KEY,
  REMOVABLE_DISKS_POLICY,
  TUNNEL_NAME,
  TUNNEL_SERVICE,
  USBSTOR_SERVICE,
} from "./settings";

/**
 * `os_version`: `CurrentMajorVersionNumber.CurrentMinorVersionNumber.CurrentBuild.UBR` (10.0.22631.4460):
 * Windows 11 is build 22000 and up, though its ProductName still says Windows 10, so the number is what
 * the server judges. Windows before 10 has no CurrentMajorVersionNumber: its CurrentVersion (6.1) is used.
 */
export async function readWindowsVersion(run: ProgramRunner): Promise<FactReading<string>> {
  const key = await readRegistryKey(run, OS_VERSION_KEY);
  if (key === null) return unknown(`${OS_VERSION_KEY} does not exist`);
  const major = dwordOf(registryValue(key, "CurrentMajorVersionNumber"));
  const minor = dwordOf(registryValue(key, "CurrentMinorVersionNumber"));
  const build = registryValue(key, "CurrentBuild")?.data ?? registryValue(key, "CurrentBuildNumber")?.data;
  const ubr = dwordOf(registryValue(key, "UBR"));
  const name = registryValue(key, "ProductName")?.data ?? "Windows";
  if (build === undefined || !/^\d+$/.test(build)) return unknown(`${OS_VERSION_KEY} has no CurrentBuild`);
  const release = registryValue(key, "DisplayVersion")?.data;
  if (major === null || minor === null) {
    const legacy = registryValue(key, "CurrentVersion")?.data;
    if (legacy === undefined || !/^\d+\.\d+$/.test(legacy))
      return unknown(`${OS_VERSION_KEY} has neither CurrentMajorVersionNumber nor CurrentVersion`);
    return known(`${legacy}.${build}`, `${name} (build ${build}), from ${OS_VERSION_KEY}`);
  }
  const version = `${major}.${minor}.${build}${ubr === null ? "" : `.${ubr}`}`;
  const edition = major === 10 && Number(build) >= 22000 ? "Windows 11" : name;
  return known(version, `${edition}${release ? ` ${release}` : ""} (build ${build}), from ${OS_VERSION_KEY}`);
}

/** The PowerShell that prints the system drive's BitLocker volume as JSON (enums as integers). */
export const BITLOCKER_QUERY =
  "Get-CimInstance -Namespace root\\CIMV2\\Security\\MicrosoftVolumeEncryption -ClassName Win32_EncryptableVolume " +
  "| Where-Object { $_.DriveLetter -eq $env:SystemDrive } | Select-Object DriveLetter,ProtectionStatus,ConversionStatus " +
  "| ConvertTo-Json -Compress";

/**
 * `disk_encrypted`: the system drive's `Win32_EncryptableVolume.ProtectionStatus` (1 = protected, 0 = not,
 * 2 = unknown: a locked volume), the class osquery, Fleet and NetBird read. Needs SYSTEM or an
 * administrator; Home editions have no such class, and the reading says so.
 */
export async function readBitLocker(run: ProgramRunner, systemDrive: string): Promise<FactReading<boolean>> {
  const result = await run(["powershell", "-NoProfile", "-NonInteractive", "-Command", BITLOCKER_QUERY]);
  if (result.code === 127) return unknown("PowerShell is not installed: BitLocker's state cannot be read");
  if (result.code !== 0)
    return unknown(
      `Get-CimInstance Win32_EncryptableVolume failed: ${firstLine(result.stderr || result.stdout)}`,
    );
  const text = result.stdout.trim();
  if (text === "")
    return unknown(
      `no BitLocker volume for ${systemDrive} (an edition without BitLocker, or not run as an administrator)`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return unknown(`Get-CimInstance printed no JSON: ${firstLine(text)}`);
  }
  const volume = (Array.isArray(parsed) ? parsed[0] : parsed) as { ProtectionStatus?: unknown } | undefined;
  const status = volume?.ProtectionStatus;
  if (status === 1) return known(true, `BitLocker protects ${systemDrive} (ProtectionStatus 1)`);
  if (status === 0) return known(false, `BitLocker does not protect ${systemDrive} (ProtectionStatus 0)`);
  return unknown(
    `BitLocker's ProtectionStatus for ${systemDrive} is ${JSON.stringify(status)} (2: locked or unknown)`,
  );
}

/**
 * `vpn_connected`: WireGuard for Windows runs the tunnel as the service `WireGuardTunnel$bulwark`; it is
 * connected when that service runs and `wg.exe show bulwark latest-handshakes` has a handshake in the
 * last 180 s. No service, or one that is stopped: false.
 */
export async function readWindowsTunnel(
  run: ProgramRunner,
  nowSeconds: number,
): Promise<FactReading<boolean>> {
  const service = await run(["sc", "query", TUNNEL_SERVICE]);
  // 1060: ERROR_SERVICE_DOES_NOT_EXIST.
  if (service.code === 1060 || /1060/.test(service.stdout))
    return known(false, `there is no ${TUNNEL_SERVICE} service (the tunnel is not installed)`);
  if (service.code !== 0)
    return unknown(
      `sc query ${TUNNEL_SERVICE} failed (exit ${service.code}): ${firstLine(service.stdout || service.stderr)}`,
    );
  // "STATE : 4  RUNNING": the label is translated on some Windows (STATUS), the state's name is not.
  const state =
    /:\s*(\d+)\s+(?:STOPPED|START_PENDING|STOP_PENDING|RUNNING|CONTINUE_PENDING|PAUSE_PENDING|PAUSED)\b/.exec(
      service.stdout,
    )?.[1];
  if (state === undefined) return unknown(`sc query ${TUNNEL_SERVICE} printed no STATE`);
  if (state !== "4") return known(false, `the ${TUNNEL_SERVICE} service is not running (state ${state})`);
  const shown = await run(["wg", "show", TUNNEL_NAME, "latest-handshakes"]);
  if (shown.code !== 0)
    return unknown(
      `wg show ${TUNNEL_NAME} latest-handshakes failed: ${firstLine(shown.stderr || shown.stdout)}`,
    );
  const latest = latestHandshake(shown.stdout);
  if (latest === 0) return known(false, `the ${TUNNEL_NAME} tunnel runs with no handshake yet`);
  const age = nowSeconds - latest;
  return known(
    age <= HANDSHAKE_MAX_AGE_SECONDS,
    `the ${TUNNEL_NAME} tunnel runs; its latest handshake was ${age} s ago (at most ${HANDSHAKE_MAX_AGE_SECONDS} s counts)`,
  );
}

/**
 * `usb_storage_blocked`: what the agent enforces, read back: the USB storage driver disabled (USBSTOR
 * Start = 4) or the removable-disk policy denying both read and write access.
 */
export async function readWindowsUsbStorage(run: ProgramRunner): Promise<FactReading<boolean>> {
  const driver = await readRegistryKey(run, USBSTOR_SERVICE);
  const policy = await readRegistryKey(run, REMOVABLE_DISKS_POLICY);
  const start = dwordOf(registryValue(driver, "Start"));
  const denied =
    dwordOf(registryValue(policy, "Deny_Read")) === 1 && dwordOf(registryValue(policy, "Deny_Write")) === 1;
  if (start === 4 || denied) {
    const how = [
      start === 4 ? "the USBSTOR driver is disabled (Start = 4)" : "",
      denied ? "the removable-disk policy denies read and write" : "",
    ].filter(Boolean);
    return known(true, how.join("; "));
  }
  if (driver === null)
    return known(false, "there is no USBSTOR driver service, and no removable-disk policy");
  return known(false, `USBSTOR Start = ${start ?? "unset"}, and no removable-disk policy denies access`);
}

/**
 * `usb_devices_blocked`: the device-installation restriction policy denies devices it does not name
 * (DenyUnspecified = 1), the counterpart of usbguard's default block.
 */
export async function readWindowsUsbDevices(run: ProgramRunner): Promise<FactReading<boolean>> {
  const key = await readRegistryKey(run, DEVICE_INSTALL_RESTRICTIONS);
  const deny = dwordOf(registryValue(key, "DenyUnspecified"));
  if (deny === 1)
    return known(
      true,
      "the device-installation policy denies devices it does not allow (DenyUnspecified = 1)",
    );
  return known(false, "no device-installation policy denies unlisted devices");
}

/** A profile's EnableFirewall: the Group Policy value when one is set, else the local setting. */
function profileEnabled(policy: RegistryKey | null, local: RegistryKey | null): number | null {
  return dwordOf(registryValue(policy, "EnableFirewall")) ?? dwordOf(registryValue(local, "EnableFirewall"));
}

/**
 * `firewall_enabled`: Windows Defender Firewall is on in every profile (domain, private, public), each
 * as Group Policy sets it (HKLM\SOFTWARE\Policies\Microsoft\WindowsFirewall\<Profile>) or else as the
 * local setting (SharedAccess\Parameters\FirewallPolicy\<Profile>); absent in both: on, Windows' default.
 */
export async function readWindowsFirewall(run: ProgramRunner): Promise<FactReading<boolean>> {
  const off: string[] = [];
  for (const [name, local, policy] of FIREWALL_PROFILES) {
    const enabled = profileEnabled(
      await readRegistryKey(run, `${FIREWALL_POLICY}\\${policy}`),
      await readRegistryKey(run, local),
    );
    if (enabled === 0) off.push(name);
  }
  if (off.length > 0)
    return known(false, `the firewall is off in the ${off.join(", ")} profile${off.length > 1 ? "s" : ""}`);
  return known(true, "the firewall is on in the domain, private and public profiles");
}

/**
 * `screen_lock_enabled`: the machine inactivity limit (Interactive logon: Machine inactivity limit,
 * `InactivityTimeoutSecs`), after which Windows locks every session. Users' own screen-saver settings are
 * theirs and not read: without the machine limit, this is false.
 */
export async function readWindowsScreenLock(run: ProgramRunner): Promise<FactReading<boolean>> {
  const seconds = dwordOf(
    registryValue(await readRegistryKey(run, INACTIVITY_POLICY), "InactivityTimeoutSecs"),
  );
  if (seconds !== null && seconds > 0)
    return known(true, `sessions lock after ${seconds} s of inactivity (InactivityTimeoutSecs)`);
  return known(
    false,
    "no machine inactivity limit (InactivityTimeoutSecs) is set; users' own screen savers are not read",
  );
}
