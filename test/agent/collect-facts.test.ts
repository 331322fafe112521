import { afterAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { collectFacts, FACT_NAMES } from "../../src/agent/facts/collect-facts";
import { checkInFacts } from "../../src/agent/facts-command";
import { runAgentCli } from "../../src/cli/run-agent-cli";
import { DeviceFactsSchema } from "../../src/domain/devices/evaluate-compliance";
import { CheckInBody } from "../../src/http/routes/agent.schemas";
import {
  buildMachine,
  OS_RELEASES,
  ROOT_DEVICES,
  removeMachines,
  USB_STORAGE,
} from "../helpers/agent-machine";

afterAll(removeMachines);

test("every fact the agent collects is one the check-in takes, and what it sends is a valid check-in body", async () => {
  expect(FACT_NAMES.filter((name) => !(name in DeviceFactsSchema.properties))).toEqual([]);
  const root = buildMachine(OS_RELEASES.ubuntu, ...ROOT_DEVICES.lvmOnLuks, USB_STORAGE.rule);
  const collected = await collectFacts(root);
  expect(checkInFacts(collected)).toEqual({
    os_version: "ubuntu 24.04",
    facts: {
      disk_encrypted: true,
      vpn_connected: false,
      usb_storage_blocked: true,
      usb_devices_blocked: false,
      screenshots_blocked: false,
    },
  });
  expect(Value.Errors(CheckInBody, checkInFacts(collected)).First()).toBeUndefined();
  // Each fact left out says why.
  expect(collected.notes.firewall_enabled).toContain("ufw is not enabled");
  expect(collected.notes.screenshots_blocked).toBe("Linux has no control that blocks screenshots");
});

test("a collector that hangs or fails leaves out its own fact only, with the reason", async () => {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.escapingLink, {
    files: { "sys/class/net/bulwark/flags": "0x1091\n" },
  });
  const collected = await collectFacts(root, {
    isLive: true,
    runProgram: (argv) =>
      argv[0] === "wg" ? new Promise(() => {}) : Promise.resolve({ code: 1, stdout: "", stderr: "no" }),
    timeLimitMs: 200,
  });
  expect(collected.os_version).toBe("debian 12");
  expect(collected.facts).toEqual({
    usb_storage_blocked: false,
    usb_devices_blocked: false,
    screenshots_blocked: false,
  });
  expect(collected.notes.vpn_connected).toBe("not read within 0.2 s");
  expect(collected.notes.disk_encrypted).toMatch(/^cannot be read: \/sys\/dev\/block\/254:0 leads out of /);
});

test("on a platform other than Linux, Windows and macOS, every agent command says so and exits 2", async () => {
  const errors: string[] = [];
  const original = console.error;
  console.error = (line: string) => errors.push(line);
  try {
    expect(await runAgentCli(["agent", "facts", "--json"], "openbsd")).toBe(2);
    expect(await runAgentCli(["agent", "anything"], "freebsd")).toBe(2);
  } finally {
    console.error = original;
  }
  expect(errors).toEqual([
    "bulwark: the agent runs on Linux, Windows and macOS only (this is openbsd)",
    "bulwark: the agent runs on Linux, Windows and macOS only (this is freebsd)",
  ]);
});
