import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { MachineTree, RootPathError, resolveInRoot } from "../../src/agent/root-path";
import { buildMachine, removeMachines } from "../helpers/agent-machine";

afterAll(removeMachines);

/** A tree with a file outside ROOT (beside it) that links try to reach. */
function treeWithOutside(links: Record<string, string>) {
  const root = buildMachine({
    files: { "etc/inside": "inside\n", "usr/lib/os-release": "ID=inside\n" },
    links,
  });
  const outside = join(dirname(root), "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret"), "outside\n");
  return { root, outside };
}

describe("paths under ROOT", () => {
  test("a relative link is followed from its own folder, as the kernel's sysfs links are", async () => {
    const root = buildMachine({
      files: { "sys/devices/virtual/block/dm-0/dm/uuid": "CRYPT-LUKS2-x\n" },
      links: { "sys/dev/block/254:0": "../../devices/virtual/block/dm-0" },
    });
    const tree = await MachineTree.open(root);
    expect(await tree.canonical("/sys/dev/block/254:0/dm/uuid")).toBe(
      "/sys/devices/virtual/block/dm-0/dm/uuid",
    );
    expect(await tree.readText("/sys/dev/block/254:0/dm/uuid")).toBe("CRYPT-LUKS2-x\n");
  });

  test("an absolute link starts again at ROOT, never at the real /", async () => {
    const { root } = treeWithOutside({
      "etc/os-release": "/usr/lib/os-release",
      "etc/passwd-link": "/etc/passwd",
    });
    const tree = await MachineTree.open(root);
    expect(await tree.readText("/etc/os-release")).toBe("ID=inside\n");
    // The real machine has /etc/passwd; ROOT has none, so the link finds nothing.
    expect(await tree.readText("/etc/passwd-link")).toBeNull();
  });

  test("a link climbing out of ROOT is refused, not followed", async () => {
    const { root } = treeWithOutside({
      "etc/escape": "../../outside/secret",
      "etc/deep/escape": "../../../../../../../etc/passwd",
    });
    const tree = await MachineTree.open(root);
    await expect(tree.readText("/etc/escape")).rejects.toThrow(RootPathError);
    await expect(tree.readText("/etc/deep/escape")).rejects.toThrow(/leads out of/);
    await expect(tree.readText("/../outside/secret")).rejects.toThrow(RootPathError);
  });

  test("a loop of links ends with an error; a missing path reads as absent", async () => {
    const root = buildMachine({ links: { a: "b", b: "a" } });
    await expect(resolveInRoot(root, "/a")).rejects.toThrow(/too many levels/);
    const tree = await MachineTree.open(root);
    expect(await tree.readText("/no/such/file")).toBeNull();
    expect(await tree.exists("/no/such/file")).toBe(false);
    expect(await tree.list("/no/such")).toBeNull();
  });
});
