/** The agent finds wg-quick, usbguard and nft in /usr/sbin and /sbin even when its PATH lacks them. */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findProgram } from "../../src/agent/find-program";

const pathBefore = process.env.PATH;
afterEach(() => {
  process.env.PATH = pathBefore;
});

test("a program of /usr/sbin is found with a PATH that has no system folder", () => {
  // iproute2's ip is in /usr/sbin on Debian (npm test installs it); a cron or sudo PATH may lack /usr/sbin.
  expect(existsSync("/usr/sbin/ip") || existsSync("/sbin/ip")).toBe(true);
  process.env.PATH = mkdtempSync(join(tmpdir(), "bulwark-empty-path-"));
  expect(findProgram("ip")).toMatch(/^\/(usr\/)?s?bin\/ip$/);
  delete process.env.PATH;
  expect(findProgram("ip")).toMatch(/^\/(usr\/)?s?bin\/ip$/);
});

test("PATH comes first, and a program that is nowhere is null", () => {
  expect(findProgram("bulwark-no-such-program")).toBeNull();
  expect(findProgram("")).toBeNull();
});
