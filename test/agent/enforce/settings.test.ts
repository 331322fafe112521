import { describe, expect, test } from "bun:test";
import { emptyJournal } from "../../../src/agent/enforce/journal";
import { planEnforcement } from "../../../src/agent/enforce/plan";
import { POLICY_SETTINGS, TUNNEL_SETTING } from "../../../src/agent/enforce/settings";
import { PolicyDataSchema } from "../../../src/domain/policies/policy-document";
import { DEVICE_KEYS, permissivePolicy, policyWith, vpnSettings } from "./enforce-fixtures";

const machine = { files: {}, journal: emptyJournal(), tunnel: "absent" as const, usbguardInstalled: true };
const options = { noTunnel: false, wireGuardPrivateKey: DEVICE_KEYS.privateKey };

describe("the settings the agent plans", () => {
  test("are every setting of the policy document's schema, so a new one cannot be forgotten", () => {
    const fromSchema = Object.entries(PolicyDataSchema.properties).flatMap(([section, schema]) =>
      Object.keys(schema.properties).map((key) => `${section}.${key}`),
    );
    const handListed: string[] = [...POLICY_SETTINGS];
    expect(handListed.sort()).toEqual(fromSchema.sort());
  });

  test("each gets an outcome and a detail, and the tunnel comes last", () => {
    const plan = planEnforcement({
      policy: permissivePolicy(),
      vpn: vpnSettings(),
      facts: {},
      machine,
      options,
    });
    expect(plan.map((entry) => entry.setting)).toEqual([...POLICY_SETTINGS, TUNNEL_SETTING]);
    for (const entry of plan) {
      expect(["enforced", "reported", "unsupported", "failed"]).toContain(entry.outcome);
      expect(entry.detail.length).toBeGreaterThan(10);
    }
  });

  test("DLP, cloud sync, file size and allowed domains are unsupported on Linux, each with its reason", () => {
    const plan = planEnforcement({ policy: permissivePolicy(), vpn: null, facts: {}, machine, options });
    const unsupported = plan.filter((entry) => entry.outcome === "unsupported").map((entry) => entry.setting);
    expect(unsupported).toEqual([
      "dlp.clipboard_sharing",
      "dlp.clipboard_direction",
      "dlp.screenshot_allowed",
      "dlp.print_allowed",
      "dlp.sensitive_data_patterns",
      "network.vpn_always_on",
      "network.allowed_domains",
      "storage.cloud_sync_allowed",
      "storage.max_file_size_mb",
    ]);
    expect(plan.find((entry) => entry.setting === "dlp.screenshot_allowed")?.detail).toContain("Wayland");
  });

  test("encryption and the VPN requirement are reported against the facts, never changed", () => {
    const policy = policyWith({ storage: { encryption_required: true }, network: { vpn_required: true } });
    const plan = planEnforcement({
      policy,
      vpn: null,
      facts: { disk_encrypted: false },
      machine,
      options,
    });
    const encryption = plan.find((entry) => entry.setting === "storage.encryption_required");
    expect(encryption).toMatchObject({ outcome: "reported", changes: [] });
    expect(encryption?.detail).toContain("disk_encrypted=false");
    const vpn = plan.find((entry) => entry.setting === "network.vpn_required");
    expect(vpn?.outcome).toBe("reported");
    expect(vpn?.detail).toContain("vpn_connected unknown");
  });
});
