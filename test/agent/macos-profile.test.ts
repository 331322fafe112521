/**
 * What the macOS agent writes as property lists, read back by Python's plistlib (Apple's format as an
 * independent parser reads it): the restrictions profile and the launch daemon; and the agent's own
 * plist parser on them.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installedProfiles, profileUuids, renderRestrictionsProfile } from "../../src/agent/macos/profile";
import { launchDaemonPlist } from "../../src/agent/macos/service";
import { parsePlist, formatPlist as renderPlist } from "../../src/lib/plist";

/** The plist as Python's plistlib reads it, as JSON (bytes and dates are not used here). */
function readWithPlistlib(text: string): unknown {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-plist-"));
  try {
    const path = join(folder, "file.plist");
    writeFileSync(path, text);
    const result = Bun.spawnSync([
      "python3",
      "-c",
      "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'), fmt=plistlib.FMT_XML)))",
      path,
    ]);
    if (result.exitCode !== 0) throw new Error(result.stderr.toString());
    return JSON.parse(result.stdout.toString());
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

test("the restrictions profile is a valid plist: a Configuration with one applicationaccess payload, allowScreenShot false", () => {
  const text = renderRestrictionsProfile("/var/db/bulwark-agent");
  const uuids = profileUuids("/var/db/bulwark-agent");
  const read = readWithPlistlib(text);
  expect(read).toEqual({
    PayloadContent: [
      {
        PayloadType: "com.apple.applicationaccess",
        PayloadVersion: 1,
        PayloadIdentifier: "com.bulwark.agent.restrictions.applicationaccess",
        PayloadUUID: uuids.payload,
        PayloadDisplayName: "Screenshots",
        allowScreenShot: false,
      },
    ],
    PayloadDisplayName: "Bulwark restrictions",
    PayloadDescription: expect.stringContaining("dlp.screenshot_allowed = false"),
    PayloadIdentifier: "com.bulwark.agent.restrictions",
    PayloadOrganization: "Bulwark",
    PayloadScope: "System",
    PayloadType: "Configuration",
    PayloadUUID: uuids.profile,
    PayloadVersion: 1,
  });
  expect(parsePlist(text)).toEqual(read as never);
  // Fixed per state folder (the file written again is the one approved), another folder another UUID.
  expect(profileUuids("/var/db/bulwark-agent")).toEqual(uuids);
  expect(profileUuids("/var/db/other").profile).not.toBe(uuids.profile);
  expect(uuids.profile).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
});

test("the launch daemon's plist: root's agent run with the state folder, at load, kept alive unless it exits 0, its tunnel left running", () => {
  const text = launchDaemonPlist("/usr/local/bin/bulwark", "/var/db/bulwark-agent");
  expect(readWithPlistlib(text)).toEqual({
    Label: "com.bulwark.agent",
    ProgramArguments: ["/usr/local/bin/bulwark", "agent", "run", "--state-dir", "/var/db/bulwark-agent"],
    RunAtLoad: true,
    // Started again after a crash or a failing exit, not after exit 0 (an unenroll that removed it all).
    KeepAlive: { SuccessfulExit: false },
    // wireguard-go and wg-quick's route monitor, in the agent's process group, outlive the agent.
    AbandonProcessGroup: true,
    Umask: 63,
    StandardOutPath: "/var/log/bulwark-agent.log",
    StandardErrorPath: "/var/log/bulwark-agent.log",
  });
  // A folder with a space stays one argument (launchd runs no shell).
  const spaced = readWithPlistlib(
    launchDaemonPlist("/usr/local/bin/bulwark", "/Library/Bulwark & Co/<state>"),
  );
  expect((spaced as { ProgramArguments: string[] }).ProgramArguments[4]).toBe(
    "/Library/Bulwark & Co/<state>",
  );
});

test("the plist parser reads what plistlib writes: every value type, entities, empty containers", () => {
  const python = Bun.spawnSync([
    "python3",
    "-c",
    "import plistlib, sys, datetime; sys.stdout.write(plistlib.dumps({'s': 'a<b & \"c\"', 'i': -3, 'r': 1.5, 't': True, 'f': False, 'a': [], 'd': {}, 'n': [1, {'k': 'v'}], 'b': b'\\x00\\x01', 'e': ''}).decode())",
  ]);
  const parsed = parsePlist(python.stdout.toString()) as Record<string, unknown>;
  expect(parsed).toEqual({
    s: 'a<b & "c"',
    i: -3,
    r: 1.5,
    t: true,
    f: false,
    a: [],
    d: {},
    n: [1, { k: "v" }],
    b: expect.any(Uint8Array),
    e: "",
  });
  expect(Array.from(parsed.b as Uint8Array)).toEqual([0, 1]);
  const { b: _bytes, ...rest } = parsed;
  expect(readWithPlistlib(renderPlist(rest as never))).toEqual(rest);
});

test("installed profiles and their owners from profiles' attribute lines", () => {
  expect(
    installedProfiles(
      "_computerlevel[1] attribute: profileIdentifier: com.bulwark.agent.restrictions\nalice[1] attribute: profileIdentifier: com.example.mail\nThere are 2 configuration profiles installed\n",
    ),
  ).toEqual([
    { owner: "_computerlevel", identifier: "com.bulwark.agent.restrictions" },
    { owner: "alice", identifier: "com.example.mail" },
  ]);
});
