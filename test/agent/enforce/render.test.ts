/** The rendered files, read back by the tools that will read them on a machine: wg-quick and usbguard. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureUsbguardRuleParser } from "../../../scripts/test-tools";
import { renderModprobeConf } from "../../../src/agent/enforce/render-modprobe";
import { renderUsbguardRules } from "../../../src/agent/enforce/render-usbguard";
import { renderWireGuardConf } from "../../../src/agent/enforce/render-wireguard";
import { wgPubkey, wgQuickStrip } from "../../helpers/wireguard";
import { DEVICE_KEYS, SERVER_KEYS, vpnSettings } from "./enforce-fixtures";

/** usbguard-rule-parser's reading of a rule file: its exit code and output. */
function parseUsbguardRules(text: string): { exitCode: number; output: string } {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-usbguard-"));
  try {
    const path = join(folder, "50-bulwark.conf");
    writeFileSync(path, text);
    const run = Bun.spawnSync([ensureUsbguardRuleParser(), "-f", path], { stdout: "pipe", stderr: "pipe" });
    return { exitCode: run.exitCode, output: run.stdout.toString() + run.stderr.toString() };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe("the tunnel's wg-quick file", () => {
  test("is read by wg-quick strip as the interface and the server's peer", () => {
    const conf = renderWireGuardConf(
      vpnSettings({ allowed_ips: ["10.100.0.0/16", "192.168.50.0/24"], dns: ["10.100.0.1", "corp.example"] }),
      DEVICE_KEYS.privateKey,
    );
    expect(conf).toContain("Address = 10.100.0.2/32\nDNS = 10.100.0.1, corp.example\n");
    const [device, server] = wgQuickStrip(conf, "bulwark");
    expect(device?.section).toBe("Interface");
    expect(wgPubkey(device?.values.PrivateKey ?? "")).toBe(DEVICE_KEYS.publicKey);
    expect(server).toEqual({
      section: "Peer",
      values: {
        PublicKey: SERVER_KEYS.publicKey,
        Endpoint: "vpn.example.com:51820",
        AllowedIPs: "10.100.0.0/16, 192.168.50.0/24",
        PersistentKeepalive: "25",
      },
    });
  });

  test("leaves out DNS and the keepalive when the server sets none", () => {
    const conf = renderWireGuardConf(
      vpnSettings({ dns: [], persistent_keepalive: 0 }),
      DEVICE_KEYS.privateKey,
    );
    expect(conf).not.toContain("DNS");
    const [, server] = wgQuickStrip(conf, "bulwark");
    expect(server?.values.PersistentKeepalive).toBeUndefined();
  });
});

describe("the usbguard rules", () => {
  test("are read by usbguard's own parser, rule for rule", () => {
    const rules = renderUsbguardRules(
      ["046D:C52B", "1050:0407"],
      ["hid", "mass_storage", "hub", "video", "other"],
    );
    expect(rules).toBe(
      [
        "# Written by the Bulwark agent (usb.allowed = false); usbguard reads it when it starts.",
        "# Each rule is in usbguard's own form, as `usbguard list-rules` prints it back.",
        "# Hubs, so that allowed devices behind them work:",
        "allow with-interface 09:00:*",
        "allow id 046d:c52b",
        "allow id 1050:0407",
        "allow with-interface one-of { 03:*:* }",
        "allow with-interface one-of { 08:*:* }",
        "allow with-interface one-of { 0e:*:* }",
        "block",
        "",
      ].join("\n"),
    );
    const parsed = parseUsbguardRules(rules);
    expect(parsed.exitCode).toBe(0);
    // The parser prints each rule as it understood it, in usbguard's own form: the same text, so that
    // the daemon's list of the rules it runs can be compared with the file line for line.
    const pairs = [...parsed.output.matchAll(/^INPUT: (.*)\nOUTPUT: (.*)$/gm)]
      .map(([, input, output]) => [input, output])
      .filter(([input]) => !input?.startsWith("#"));
    expect(pairs).toHaveLength(7);
    for (const [input, output] of pairs) expect(output).toBe(input as string);
  });

  test("every class a policy can allow makes a rule usbguard reads", () => {
    const parsed = parseUsbguardRules(
      renderUsbguardRules(
        [],
        ["audio", "communications", "hid", "imaging", "printer", "smart_card", "wireless"],
      ),
    );
    expect(parsed.exitCode).toBe(0);
    for (const code of ["01", "02", "03", "06", "07", "0b", "e0"])
      expect(parsed.output).toContain(`OUTPUT: allow with-interface one-of { ${code}:*:* }`);
  });

  test("the parser is a real check: it refuses a rule it cannot read", () => {
    expect(parseUsbguardRules("allow with-interface one-of { hid }\n").exitCode).not.toBe(0);
  });
});

test("the modprobe file makes both USB storage drivers unloadable", () => {
  const lines = renderModprobeConf()
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"));
  expect(lines).toEqual(["install usb-storage /bin/false", "install uas /bin/false"]);
});
