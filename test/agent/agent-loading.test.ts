/** `bulwark agent ...` evaluates none of the server's modules: no database, HTTP or domain code. */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";

afterAll(removeMachines);

const PROJECT = join(import.meta.dir, "../..");
const SERVER_MODULE = /\/src\/(db|domain|http|jobs)\/|\/node_modules\/(drizzle-orm|elysia|@elysiajs)\//;

/** The modules `bulwark ARGS` evaluated, run from source with a preload that lists them at exit. */
function modulesLoadedBy(args: string[]): string[] {
  const root = buildMachine(OS_RELEASES.ubuntu);
  const listing = join(dirname(root), "modules.json");
  const probe = join(dirname(root), "probe.ts");
  writeFileSync(
    probe,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(listing)}, JSON.stringify(Object.keys(require.cache))));`,
  );
  const result = Bun.spawnSync([process.execPath, "--preload", probe, "src/main.ts", ...args], {
    cwd: PROJECT,
  });
  expect(result.exitCode).toBe(0);
  return JSON.parse(require("node:fs").readFileSync(listing, "utf8")) as string[];
}

test("agent facts loads the agent and none of the server's modules", () => {
  const root = buildMachine(OS_RELEASES.ubuntu, ...ROOT_DEVICES.luks);
  const loaded = modulesLoadedBy(["agent", "facts", "--json", "--root", root]);
  expect(loaded.some((file) => file.endsWith("/src/agent/facts/collect-facts.ts"))).toBe(true);
  expect(loaded.filter((file) => SERVER_MODULE.test(file))).toEqual([]);
});

test("the probe sees the server's modules where they are loaded (bulwark version)", () => {
  expect(modulesLoadedBy(["version"]).filter((file) => SERVER_MODULE.test(file)).length).toBeGreaterThan(10);
});
