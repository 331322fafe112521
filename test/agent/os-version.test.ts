import { afterAll, expect, test } from "bun:test";
import { parseOsRelease, readOsVersion } from "../../src/agent/facts/os-version";
import { MachineTree } from "../../src/agent/root-path";
import { buildMachine, OS_RELEASES, removeMachines } from "../helpers/agent-machine";

afterAll(removeMachines);

async function osVersionOf(...parts: Parameters<typeof buildMachine>) {
  return readOsVersion(await MachineTree.open(buildMachine(...parts)));
}

test("os_version is ID and VERSION_ID, through /etc/os-release's link (relative or absolute) inside ROOT", async () => {
  expect((await osVersionOf(OS_RELEASES.ubuntu)).value).toBe("ubuntu 24.04");
  expect((await osVersionOf(OS_RELEASES.debian)).value).toBe("debian 12");
  expect((await osVersionOf(OS_RELEASES.fedora)).value).toBe("fedora 40");
});

test("without /etc/os-release, /usr/lib/os-release is read, as os-release(5) says", async () => {
  expect(await osVersionOf(OS_RELEASES.vendorOnly)).toEqual({
    value: "opensuse-tumbleweed 20240501",
    detail: "ID and VERSION_ID of /usr/lib/os-release",
  });
});

test("no VERSION_ID, or no os-release at all: left out, with the reason", async () => {
  expect(await osVersionOf(OS_RELEASES.arch)).toEqual({
    detail: "/etc/os-release has no VERSION_ID (ID=arch)",
  });
  expect((await osVersionOf({ folders: ["etc"] })).value).toBeUndefined();
  expect((await osVersionOf({ folders: ["etc"] })).detail).toContain(
    "neither /etc/os-release nor /usr/lib/os-release",
  );
});

test("the os-release syntax: quotes of both kinds, escapes in double quotes, comments, lines that do not parse", () => {
  const fields = parseOsRelease(
    [
      "# a comment",
      "  ",
      'NAME="Fedora \\"Linux\\" \\\\ \\$HOME \\`x\\`"',
      "ID='fedora'",
      "VERSION_ID=40",
      "PRETTY=\"a\"'b'c",
      "UNQUOTED=with\\ space",
      "TRAILING=value # comment",
      'BROKEN="never closed',
      "not an assignment",
      "lowercase_ok=1",
    ].join("\n"),
  );
  expect(Object.fromEntries(fields)).toEqual({
    NAME: 'Fedora "Linux" \\ $HOME `x`',
    ID: "fedora",
    VERSION_ID: "40",
    PRETTY: "abc",
    UNQUOTED: "with space",
    TRAILING: "value",
    lowercase_ok: "1",
  });
});
