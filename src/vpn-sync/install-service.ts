/**
 * `bulwark vpn install-service`: the VPN peer sync as a systemd service on the WireGuard server, from
 * the shipped deploy/bulwark-vpn-sync.service.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import unit from "../../deploy/bulwark-vpn-sync.service" with { type: "text" };

export const UNIT_PATH = "/etc/systemd/system/bulwark-vpn-sync.service";
export const EXECUTABLE_PATH = "/usr/local/bin/bulwark";
/** The API keys, handed to the service as the credential `api-key` (LoadCredential=). */
export const KEY_PATH = "/etc/bulwark/vpn-sync.key";
/** The CA that verifies the server, when --ca-file was given. */
export const CA_PATH = "/etc/bulwark/vpn-sync-ca.pem";
const SERVICE = "bulwark-vpn-sync";
/** Exists while systemd is the running init system (sd_booted(3) looks for it). */
const SYSTEMD_RUNNING = "/run/systemd/system";

/** install-service could not finish: the line to say and the exit code (2: nothing to do here). */
export class InstallServiceError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export interface InstallServiceOptions {
  /** The machine's root folder: `/`, or a prepared tree that gets the files only. */
  root: string;
  server: string;
  /** The API keys, one per line as the key file holds them. */
  apiKeys: readonly string[];
  iface: string;
  intervalSeconds: number | null;
  /** The CA's PEM, when the server's certificate needs one. */
  ca: string | null;
  /** The executable to install (default: this one). */
  executable?: string;
  /** Runs systemctl (tests replace it); the exit code and what it said. */
  systemctl?: (args: string[]) => { exitCode: number; output: string };
}

/** A value in a unit's ExecStart, safe from systemd's specifiers (%) and variable expansion ($). */
function unitWord(value: string): string {
  return value.replaceAll("%", "%%").replaceAll("$", "$$$$");
}

/** The shipped unit, starting the sync against `server` for `iface`. */
export function vpnSyncUnit(
  options: Pick<InstallServiceOptions, "server" | "iface" | "intervalSeconds" | "ca">,
) {
  const shipped =
    "ExecStart=/usr/local/bin/bulwark vpn sync --server https://bulwark.example.com --api-key-file %d/api-key --interface wg0";
  const flags = [
    `--server ${unitWord(options.server)}`,
    "--api-key-file %d/api-key",
    `--interface ${options.iface}`,
    ...(options.intervalSeconds === null ? [] : [`--interval ${options.intervalSeconds}`]),
    ...(options.ca === null ? [] : [`--ca-file ${CA_PATH}`]),
  ];
  // Replaced by functions: a replacement string would read the `$$` of an escaped dollar as one `$`.
  return unit
    .replace(shipped, () => `ExecStart=${EXECUTABLE_PATH} vpn sync ${flags.join(" ")}`)
    .replace(
      "After=network-online.target wg-quick@wg0.service",
      () => `After=network-online.target wg-quick@${options.iface}.service`,
    );
}

function sha256OfFile(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Writes `text` with exactly `mode`, so that a crash leaves the old file or the new one. */
function writeFileAtomic(path: string, text: string | Uint8Array, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    const descriptor = openSync(temporary, "w", mode);
    try {
      writeSync(descriptor, typeof text === "string" ? Buffer.from(text) : text);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    chmodSync(temporary, mode);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * Installs the service: copies this executable to ROOT/usr/local/bin/bulwark (0755, unless it already is
 * that file), the keys to ROOT/etc/bulwark/vpn-sync.key (0600), the CA to ROOT/etc/bulwark/vpn-sync-ca.pem
 * (0644), and the unit to ROOT/etc/systemd/system/bulwark-vpn-sync.service (0644). On this machine (ROOT
 * /) systemd must be running, which is checked before anything is written (exit 2), then `systemctl
 * daemon-reload`, `enable` and `restart`; when one fails, what this run wrote is put back as it was
 * (exit 1). Returns the lines to say.
 */
export function installVpnSyncService(options: InstallServiceOptions): string[] {
  const isLive = resolve(options.root) === "/";
  if (isLive && !existsSync(SYSTEMD_RUNNING))
    throw new InstallServiceError(
      `systemd is not running here (no ${SYSTEMD_RUNNING}): nothing was installed; start \`bulwark vpn sync\` with your service manager`,
      2,
    );
  const source = resolve(options.executable ?? process.execPath);
  const said: string[] = [];
  /** What this run changed, undone newest first when a later step fails. */
  const undo: (() => void)[] = [];
  const takeBack = () => {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch {
        // On with the rest: the error that made the run fail is the one to say.
      }
    }
  };
  /** Writes a file under ROOT, remembering how to put back what was there. */
  const put = (path: string, content: string | Uint8Array, mode: number) => {
    const target = join(options.root, path);
    const before = existsSync(target) ? readFileSync(target) : null;
    const modeBefore = before === null ? mode : statSync(target).mode & 0o7777;
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileAtomic(target, content, mode);
    undo.push(() => (before === null ? unlinkSync(target) : writeFileAtomic(target, before, modeBefore)));
    return target;
  };
  let writing = join(options.root, EXECUTABLE_PATH);
  try {
    const executable = writing;
    const isSame =
      existsSync(executable) &&
      statSync(executable).size === statSync(source).size &&
      sha256OfFile(executable) === sha256OfFile(source);
    if (isSame) {
      said.push(`${executable} is already this executable`);
    } else {
      const isThere = existsSync(executable);
      mkdirSync(dirname(executable), { recursive: true, mode: 0o755 });
      const temporary = `${executable}.${process.pid}.tmp`;
      try {
        copyFileSync(source, temporary);
        chmodSync(temporary, 0o755);
        renameSync(temporary, executable);
      } finally {
        rmSync(temporary, { force: true });
      }
      if (!isThere) undo.push(() => unlinkSync(executable));
      said.push(`Installed ${executable} (0755), a copy of ${source}`);
    }
    writing = join(options.root, KEY_PATH);
    said.push(
      `Wrote ${put(KEY_PATH, `${options.apiKeys.join("\n")}\n`, 0o600)} (0600): ${options.apiKeys.length} API key(s)`,
    );
    if (options.ca !== null) {
      writing = join(options.root, CA_PATH);
      said.push(`Wrote ${put(CA_PATH, options.ca, 0o644)} (0644)`);
    }
    writing = join(options.root, UNIT_PATH);
    const text = vpnSyncUnit(options);
    put(UNIT_PATH, text, 0o644);
    const execStart = /^ExecStart=(.*)$/m.exec(text)?.[1] ?? "";
    said.push(`Wrote ${writing} (ExecStart=${execStart})`);
  } catch (error) {
    takeBack();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM")
      throw new InstallServiceError(`cannot write ${writing}: permission denied; run as root (sudo)`, 1);
    throw new InstallServiceError(`cannot write ${writing}: ${(error as Error).message}`, 1);
  }
  if (!isLive) {
    said.push(`ROOT is not /: run systemctl daemon-reload && systemctl enable --now ${SERVICE} there`);
    return said;
  }
  const systemctl =
    options.systemctl ??
    ((args: string[]) => {
      const run = Bun.spawnSync(["systemctl", ...args], { stdout: "pipe", stderr: "pipe" });
      return { exitCode: run.exitCode, output: `${run.stderr}\n${run.stdout}` };
    });
  for (const args of [["daemon-reload"], ["enable", SERVICE], ["restart", SERVICE]]) {
    let failure: string | null = null;
    try {
      const result = systemctl(args);
      if (result.exitCode !== 0)
        failure = result.output.trim().split("\n")[0]?.trim() || `exit ${result.exitCode}`;
    } catch (error) {
      failure = (error as Error).message;
    }
    if (failure === null) continue;
    takeBack();
    // systemd forgets the unit it loaded only when told (when it could be reached at all).
    if (args[0] !== "daemon-reload") {
      try {
        systemctl(["daemon-reload"]);
      } catch {
        // The failure above is the one to say.
      }
    }
    throw new InstallServiceError(
      `systemctl ${args.join(" ")} failed: ${failure}; what install-service wrote is put back as it was`,
      1,
    );
  }
  const note =
    source === resolve(join(options.root, EXECUTABLE_PATH)) ? "" : ` (${source} is no longer needed)`;
  said.push(`${SERVICE} is enabled and started: journalctl -u ${SERVICE}${note}`);
  return said;
}
