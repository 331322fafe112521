/**
 * install-service on macOS, into a prepared tree: the launch daemon's plist (0644) starting the copied
 * executable, recorded in service.json; unenroll's removal takes exactly that away.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installOnMacos, removeInstalledService } from "../../src/agent/install-service";
import { parsePlist } from "../../src/lib/plist";

const base = mkdtempSync(join(tmpdir(), "bulwark-mac-service-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

test("the daemon's plist and the executable go into ROOT, recorded, and are removed again", async () => {
  const root = join(base, "root");
  const stateDir = join(base, "state");
  const executable = join(base, "bulwark");
  writeFileSync(executable, "#!/bin/sh\necho bulwark\n", { mode: 0o755 });
  const lines: string[] = [];
  const original = console.error;
  console.error = (line: string) => lines.push(line);
  try {
    await installOnMacos({ root, stateDir, executable });
  } finally {
    console.error = original;
  }
  const plistPath = join(root, "Library/LaunchDaemons/com.bulwark.agent.plist");
  expect(statSync(plistPath).mode & 0o777).toBe(0o644);
  expect(parsePlist(readFileSync(plistPath, "utf8"))).toMatchObject({
    Label: "com.bulwark.agent",
    ProgramArguments: ["/usr/local/bin/bulwark", "agent", "run", "--state-dir", stateDir],
    RunAtLoad: true,
    KeepAlive: { SuccessfulExit: false },
    AbandonProcessGroup: true,
  });
  expect(readFileSync(join(root, "usr/local/bin/bulwark"), "utf8")).toBe("#!/bin/sh\necho bulwark\n");
  const record = JSON.parse(readFileSync(join(stateDir, "service.json"), "utf8"));
  expect(record.kind).toBe("macos-launch-daemon");
  expect(lines).toContain(
    "ROOT is not /: run launchctl bootstrap system /Library/LaunchDaemons/com.bulwark.agent.plist there",
  );

  const removed = await removeInstalledService({ root, stateDir });
  expect(removed).toEqual([`Removed ${plistPath}`, `Removed ${join(root, "usr/local/bin/bulwark")}`]);
  expect(existsSync(plistPath)).toBe(false);
  expect(existsSync(join(stateDir, "service.json"))).toBe(false);
});
