/**
 * install-service on macOS: the agent as the launch daemon com.bulwark.agent, as Tailscale's and Fleet's
 * daemons are laid out: /Library/LaunchDaemons/com.bulwark.agent.plist (root:wheel, 0644) starting the
 * installed executable with `agent run`, loaded with `launchctl bootstrap system`; and its removal for
 * unenroll (`launchctl bootout`, the plist and the copied executable taken away).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync } from "node:fs";
import { formatPlist } from "../../lib/plist";
import { DAEMON_LABEL, MACOS_STATE_DIR, PROGRAMS } from "./settings";

/**
 * The launch daemon's definition: `EXECUTABLE agent run --state-dir STATE`, started at boot, started
 * again whenever it ends otherwise than with exit 0.
 */
export function launchDaemonPlist(executable: string, stateDir: string): string {
  return formatPlist({
    Label: DAEMON_LABEL,
    ProgramArguments: [executable, "agent", "run", "--state-dir", stateDir],
    RunAtLoad: true,
    // Started again after a crash, a signal or a failing exit (no enrollment yet: exit 6, tried again until
    // there is one), but not after exit 0: the agent stopped on purpose (SIGTERM), or the end of an
    // unenroll, whose executable is gone (launchd.plist(5): SuccessfulExit false restarts "in the inverse
    // condition", a nonzero exit).
    KeepAlive: { SuccessfulExit: false },
    // launchd kills what is left of the job's process group when the agent's process ends (launchd.plist(5)),
    // unless told not to. wg-quick's children live in that group: wireguard-go daemonizes without a session
    // of its own and the route monitor runs in the background, so an agent that restarts (a crash, an
    // upgrade's bootout and bootstrap) would take the tunnel down with it. They are left running.
    AbandonProcessGroup: true,
    // As the systemd unit's UMask=0077: what the agent writes in its state folder is root's only.
    Umask: 0o077,
    StandardOutPath: "/var/log/bulwark-agent.log",
    StandardErrorPath: "/var/log/bulwark-agent.log",
  });
}

/** `launchctl bootstrap` refuses a plist not owned by root:wheel: given so when this process is root. */
export function ownByRootWheel(path: string): void {
  if (process.getuid?.() === 0) chownSync(path, 0, 0);
}

/** How long the self-bootout waits for the agent to end before it boots the daemon out anyway. */
export const BOOTOUT_WAIT_SECONDS = 60;

/**
 * The end of an unenroll run by the daemon itself: `launchctl bootout system/com.bulwark.agent` once the
 * process `pid` (the agent) has ended, or after BOOTOUT_WAIT_SECONDS, by a shell started in a session
 * (and so a process group) of its own and not waited for.
 *
 * Why so, and not the bootout run here as the last step: booting the daemon out ends this very process
 * (SIGTERM, then SIGKILL after launchd's exit timeout), and the state folder is emptied after the
 * service's removal returns (finishUnenroll), so a bootout run and waited for here could cut that short.
 * Why a session of its own, not only AbandonProcessGroup: launchd kills the job's process group when the
 * job ends, and the daemon running this unenroll may have been loaded from an earlier plist without
 * AbandonProcessGroup. Why after the agent ended: by then everything is removed, and a bootout of a job
 * that has ended only unloads it; launchd does not start the deleted executable again.
 */
export function startBootoutAfterExit(pid: number, launchctl: string = PROGRAMS.launchctl): ChildProcess {
  const script = `i=0; while kill -0 "$1" 2>/dev/null && [ "$i" -lt ${BOOTOUT_WAIT_SECONDS} ]; do sleep 1; i=$((i + 1)); done; exec "$2" bootout "system/$3"`;
  const child = spawn("/bin/sh", ["-c", script, "sh", String(pid), launchctl, DAEMON_LABEL], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return child;
}

/** The default state folder on macOS (settings.ts says why /var/db). */
export { MACOS_STATE_DIR };
