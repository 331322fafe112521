/**
 * install-service on macOS: the agent as the launch daemon com.bulwark.agent, as Tailscale's and Fleet's
 * daemons are laid out: /Library/LaunchDaemons/com.bulwark.agent.plist (root:wheel, 0644) starting the
 * installed executable with `agent run`, loaded with `launchctl bootstrap system`; and its removal for
 * unenroll (`launchctl bootout`, the plist and the copied executable taken away).
 */
import { chownSync } from "node:fs";
import { formatPlist } from "../../lib/plist";
import { DAEMON_LABEL, MACOS_STATE_DIR } from "./settings";

/** The launch daemon's definition: `EXECUTABLE agent run --state-dir STATE`, started at boot, kept alive. */
export function launchDaemonPlist(executable: string, stateDir: string): string {
  return formatPlist({
    Label: DAEMON_LABEL,
    ProgramArguments: [executable, "agent", "run", "--state-dir", stateDir],
    RunAtLoad: true,
    KeepAlive: true,
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

/** The default state folder on macOS (settings.ts says why /var/db). */
export { MACOS_STATE_DIR };
