import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import unit from "../../deploy/bulwark-agent.service" with { type: "text" };
import { type CommandRunner, runCommand as runSystemCommand } from "./enforce/apply";
import { AgentExit } from "./enroll-command";
import { writeFileAtomic } from "./identity/state-folder";

export const UNIT_PATH = "etc/systemd/system/bulwark-agent.service";

/** The shipped unit (deploy/bulwark-agent.service), starting `executable` with the given state folder. */
export function agentUnit(executable: string, stateDir: string): string {
  const stateFlag = stateDir === "/var/lib/bulwark-agent" ? "" : ` --state-dir ${stateDir}`;
  return unit.replace(
    "ExecStart=/usr/local/bin/bulwark agent run",
    `ExecStart=${executable} agent run${stateFlag}`,
  );
}

/**
 * `bulwark agent install-service`: writes the unit to ROOT/etc/systemd/system/bulwark-agent.service
 * (0644), starting this executable; on the real machine (ROOT /) also `systemctl daemon-reload` and
 * `systemctl enable --now bulwark-agent`. A prepared tree gets the file only.
 */
export async function installService(options: {
  root: string;
  stateDir: string;
  executable?: string;
  runner?: CommandRunner;
}): Promise<void> {
  const executable = resolve(options.executable ?? process.execPath);
  if (!existsSync(executable)) throw new AgentExit(`${executable}: no such executable`, 1);
  const path = join(options.root, UNIT_PATH);
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  writeFileAtomic(path, agentUnit(executable, options.stateDir), 0o644);
  chmodSync(path, 0o644);
  console.error(`Wrote ${path} (ExecStart=${executable} agent run)`);
  if (resolve(options.root) !== "/") {
    console.error("ROOT is not /: run systemctl daemon-reload && systemctl enable --now bulwark-agent there");
    return;
  }
  const runner = options.runner ?? runSystemCommand;
  for (const argv of [
    ["systemctl", "daemon-reload"],
    ["systemctl", "enable", "--now", "bulwark-agent"],
  ]) {
    const result = await runner(argv);
    if (result.exitCode !== 0) throw new AgentExit(`${argv.join(" ")} failed: ${result.stderr.trim()}`, 1);
  }
  console.error("bulwark-agent is enabled and started: journalctl -u bulwark-agent");
}
