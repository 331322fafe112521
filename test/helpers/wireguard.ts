/**
 * wireguard-tools as the independent counterpart for the VPN configuration: `wg pubkey` derives public
 * keys, `wg-quick strip` reads the wg-quick format the way wg-quick itself does.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** `wg pubkey` of a private key. */
export function wgPubkey(privateKey: string): string {
  const run = Bun.spawnSync(["wg", "pubkey"], {
    stdin: Buffer.from(`${privateKey}\n`),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new Error(`wg pubkey refused the key: ${run.stderr.toString()}`);
  return run.stdout.toString().trim();
}

/** A parsed WireGuard configuration: its sections in order, each a map of key to value. */
export type WgConfig = { section: string; values: Record<string, string> }[];

/**
 * `wg-quick strip` of a wg-quick file (what `wg setconf` would be given), parsed. wg-quick refuses a
 * file it cannot read; the wg-quick-only keys (Address, DNS) are gone from the result.
 */
export function wgQuickStrip(text: string, interfaceName = "wgtest"): WgConfig {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-wg-"));
  try {
    const path = join(folder, `${interfaceName}.conf`);
    writeFileSync(path, text, { mode: 0o600 });
    const run = Bun.spawnSync(["wg-quick", "strip", path], { stdout: "pipe", stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`wg-quick strip failed: ${run.stderr.toString()}`);
    return parseWgConfig(run.stdout.toString());
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Runs a command that must succeed (with `env` added to the environment); its standard output. */
export function runTool(command: string[], env: Record<string, string> = {}): string {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  if (result.exitCode !== 0)
    throw new Error(`${command.join(" ")} failed (${result.exitCode}): ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** `wg-quick strip` of a wg-quick file, written to `<folder>/<name>.wg` for `wg setconf`; its path. */
export function strippedFile(folder: string, name: string, wgQuick: string): string {
  const source = join(folder, `${name}.conf`);
  writeFileSync(source, wgQuick, { mode: 0o600 });
  const target = join(folder, `${name}.wg`);
  writeFileSync(target, runTool(["wg-quick", "strip", source]), { mode: 0o600 });
  return target;
}

/** Reads `[Section]` and `Key = value` lines, skipping comments and blank lines. */
export function parseWgConfig(text: string): WgConfig {
  const sections: WgConfig = [];
  for (const rawLine of text.split("\n")) {
    const line = rawLine.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header?.[1]) {
      sections.push({ section: header[1], values: {} });
      continue;
    }
    const entry = /^(\w+)\s*=\s*(.*)$/.exec(line);
    const current = sections.at(-1);
    if (!entry?.[1] || !current) throw new Error(`not a WireGuard configuration line: ${rawLine}`);
    current.values[entry[1]] = entry[2] ?? "";
  }
  return sections;
}
