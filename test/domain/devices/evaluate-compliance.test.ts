import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import {
  type CompliancePolicy,
  ComplianceReportSchema,
  DeviceFactsSchema,
  evaluateCompliance,
  SEVERITIES,
  type Violation,
  ViolationSchema,
} from "../../../src/domain/devices/evaluate-compliance.ts";
import { checkOsVersion, parseMajorVersion } from "../../../src/domain/devices/platform-versions.ts";

const STRICT_POLICY: CompliancePolicy = {
  dlp: { screenshot_allowed: false },
  network: { vpn_required: true },
  usb: { allowed: false, audit_only: false },
  storage: { encryption_required: true, external_storage_allowed: false },
};

const LENIENT_POLICY: CompliancePolicy = {
  dlp: { screenshot_allowed: true },
  network: { vpn_required: false },
  usb: { allowed: true, audit_only: false },
  storage: { encryption_required: false, external_storage_allowed: true },
};

const HEALTHY_FACTS = {
  disk_encrypted: true,
  vpn_connected: true,
  screen_lock_enabled: true,
  firewall_enabled: true,
  usb_storage_blocked: true,
  usb_devices_blocked: true,
  screenshots_blocked: true,
};

const UNHEALTHY_FACTS = {
  disk_encrypted: false,
  vpn_connected: false,
  screen_lock_enabled: false,
  firewall_enabled: false,
  usb_storage_blocked: false,
  usb_devices_blocked: false,
  screenshots_blocked: false,
};

describe("parseMajorVersion", () => {
  test.each([
    ["14.2.1", 14],
    ["10.0.19045", 10],
    ["10.0.22631", 10],
    ["Windows 11 Pro 23H2", 11],
    ["11", 11],
    ["macOS 13.4", 13],
    ["Android 14", 14],
    ["iOS 17.1", 17],
    ["iOS17.1", 17],
    ["Windows XP", null],
    ["", null],
  ])("%p -> %p", (text, expected) => {
    expect(parseMajorVersion(text)).toBe(expected);
  });
});

describe("checkOsVersion", () => {
  test.each([
    ["windows", "6.3.9600", false],
    ["windows", "Windows 8.1", false],
    ["windows", "10.0.19045", true],
    ["windows", "10.0.22000", true],
    ["windows", "Windows 11 Pro 23H2", true],
    ["windows", "11", true],
    ["macos", "11.7.10", false],
    ["macos", "10.15.7", false],
    ["macos", "12.0", true],
    ["macos", "macOS 13.4", true],
    ["android", "9", false],
    ["android", "Android 10", true],
    ["android", "Android 14", true],
    ["ios", "14.8.1", false],
    ["ios", "iOS 15.0", true],
    ["ios", "iOS 17.1", true],
  ] as const)("%s %p supported: %p", (platform, osVersion, supported) => {
    expect(checkOsVersion(platform, osVersion).supported).toBe(supported);
  });

  test("states each platform's minimum", () => {
    expect(checkOsVersion("windows", "10").required).toBe(">= 10");
    expect(checkOsVersion("macos", "12").required).toBe(">= 12");
    expect(checkOsVersion("android", "10").required).toBe(">= 10");
    expect(checkOsVersion("ios", "15").required).toBe(">= 15");
  });

  test("linux has no minimum, whatever it reports", () => {
    expect(checkOsVersion("linux", "2.6.32")).toEqual({ supported: true, required: "any" });
    expect(checkOsVersion("linux", "Debian GNU/Linux")).toEqual({ supported: true, required: "any" });
  });

  test.each(["windows", "macos", "android", "ios"] as const)(
    "an unparseable %s version is unsupported",
    (platform) => {
      expect(checkOsVersion(platform, "unknown").supported).toBe(false);
    },
  );
});

describe("evaluateCompliance", () => {
  test("is unknown until the device reports facts or an OS version, listing what the policy needs", () => {
    expect(evaluateCompliance({ platform: "windows", policy: STRICT_POLICY })).toEqual({
      status: "unknown",
      violations: [],
      missing: [
        "os_version",
        "storage.encryption_required",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
        "dlp.screenshot_allowed",
      ],
    });
    // Nothing reported is unknown even when the policy asks nothing of the facts.
    expect(evaluateCompliance({ platform: "linux", policy: LENIENT_POLICY })).toEqual({
      status: "unknown",
      violations: [],
      missing: [],
    });
    expect(
      evaluateCompliance({ platform: "ios", osVersion: null, facts: null, policy: STRICT_POLICY }).status,
    ).toBe("unknown");
    expect(
      evaluateCompliance({ platform: "ios", osVersion: "  ", facts: {}, policy: STRICT_POLICY }).status,
    ).toBe("unknown");
  });

  test("an OS version alone is compliant only when the policy needs no fact", () => {
    expect(evaluateCompliance({ platform: "macos", osVersion: "14.2.1", policy: LENIENT_POLICY })).toEqual({
      status: "compliant",
      violations: [],
      missing: [],
    });
    // Nothing checked the facts the strict policy needs: unknown, not compliant.
    expect(evaluateCompliance({ platform: "macos", osVersion: "14.2.1", policy: STRICT_POLICY })).toEqual({
      status: "unknown",
      violations: [],
      missing: [
        "storage.encryption_required",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
        "dlp.screenshot_allowed",
      ],
    });
    expect(evaluateCompliance({ platform: "macos", osVersion: "11.7", policy: STRICT_POLICY }).status).toBe(
      "non_compliant",
    );
  });

  test("a violation makes the device non-compliant even when other rules could not be checked", () => {
    expect(
      evaluateCompliance({ platform: "ios", facts: { disk_encrypted: false }, policy: STRICT_POLICY }),
    ).toEqual({
      status: "non_compliant",
      violations: [
        { rule: "storage.encryption_required", required: true, actual: false, severity: "critical" },
      ],
      missing: [
        "os_version",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
        "dlp.screenshot_allowed",
      ],
    });
  });

  test("a needed fact that is missing makes the device unknown and is named", () => {
    expect(
      evaluateCompliance({
        platform: "ios",
        osVersion: "17.1",
        facts: { ...HEALTHY_FACTS, vpn_connected: undefined },
        policy: STRICT_POLICY,
      }),
    ).toEqual({ status: "unknown", violations: [], missing: ["network.vpn_required"] });
  });

  test("a missing OS version makes the device unknown only on a platform with a minimum", () => {
    expect(evaluateCompliance({ platform: "windows", facts: HEALTHY_FACTS, policy: STRICT_POLICY })).toEqual({
      status: "unknown",
      violations: [],
      missing: ["os_version"],
    });
    expect(evaluateCompliance({ platform: "linux", facts: HEALTHY_FACTS, policy: STRICT_POLICY })).toEqual({
      status: "compliant",
      violations: [],
      missing: [],
    });
  });

  test("facts alone are enough on a platform without an OS minimum", () => {
    expect(
      evaluateCompliance({ platform: "linux", facts: { disk_encrypted: true }, policy: LENIENT_POLICY }),
    ).toEqual({ status: "compliant", violations: [], missing: [] });
  });

  test("a healthy device on a strict policy is compliant", () => {
    const result = evaluateCompliance({
      platform: "windows",
      osVersion: "10.0.22631",
      facts: HEALTHY_FACTS,
      policy: STRICT_POLICY,
    });
    expect(result).toEqual({ status: "compliant", violations: [], missing: [] });
  });

  test("a lenient policy asks nothing of the facts", () => {
    const result = evaluateCompliance({
      platform: "linux",
      osVersion: "6.8.0",
      facts: UNHEALTHY_FACTS,
      policy: LENIENT_POLICY,
    });
    expect(result).toEqual({ status: "compliant", violations: [], missing: [] });
  });

  test("reports an unsupported OS version as critical with the reported string", () => {
    const result = evaluateCompliance({
      platform: "android",
      osVersion: "Android 9",
      policy: LENIENT_POLICY,
    });
    expect(result.violations).toEqual([
      { rule: "os_version", required: ">= 10", actual: "Android 9", severity: "critical" },
    ]);
  });

  test("reports an unparseable OS version", () => {
    const result = evaluateCompliance({
      platform: "windows",
      osVersion: "Windows XP",
      policy: LENIENT_POLICY,
    });
    expect(result.violations).toEqual([
      { rule: "os_version", required: ">= 10", actual: "Windows XP", severity: "critical" },
    ]);
  });

  test("an unlisted platform has no OS minimum", () => {
    const result = evaluateCompliance({ platform: "freebsd", osVersion: "1", policy: LENIENT_POLICY });
    expect(result).toEqual({ status: "compliant", violations: [], missing: [] });
  });

  const singleRules: Array<{
    rule: string;
    policy: CompliancePolicy;
    facts: Record<string, boolean>;
    violation: Violation;
  }> = [
    {
      rule: "storage.encryption_required",
      policy: { ...LENIENT_POLICY, storage: { encryption_required: true, external_storage_allowed: true } },
      facts: { disk_encrypted: false },
      violation: { rule: "storage.encryption_required", required: true, actual: false, severity: "critical" },
    },
    {
      rule: "network.vpn_required",
      policy: { ...LENIENT_POLICY, network: { vpn_required: true } },
      facts: { vpn_connected: false },
      violation: { rule: "network.vpn_required", required: true, actual: false, severity: "high" },
    },
    {
      rule: "usb.allowed",
      policy: { ...LENIENT_POLICY, usb: { allowed: false, audit_only: false } },
      facts: { usb_devices_blocked: false },
      violation: { rule: "usb.allowed", required: false, actual: true, severity: "high" },
    },
    {
      rule: "storage.external_storage_allowed",
      policy: { ...LENIENT_POLICY, storage: { encryption_required: false, external_storage_allowed: false } },
      facts: { usb_storage_blocked: false },
      violation: {
        rule: "storage.external_storage_allowed",
        required: false,
        actual: true,
        severity: "high",
      },
    },
    {
      rule: "dlp.screenshot_allowed",
      policy: { ...LENIENT_POLICY, dlp: { screenshot_allowed: false } },
      facts: { screenshots_blocked: false },
      violation: { rule: "dlp.screenshot_allowed", required: false, actual: true, severity: "medium" },
    },
  ];

  test("usb.allowed = false with audit_only logs USB use and blocks nothing: no fact is required", () => {
    const auditOnly = { ...LENIENT_POLICY, usb: { allowed: false, audit_only: true } };
    expect(
      evaluateCompliance({ platform: "linux", facts: { usb_devices_blocked: false }, policy: auditOnly }),
    ).toEqual({
      status: "compliant",
      violations: [],
      missing: [],
    });
  });

  test("usb_storage_blocked alone no longer satisfies usb.allowed = false: nothing may block other devices", () => {
    const result = evaluateCompliance({
      platform: "linux",
      facts: { usb_storage_blocked: true },
      policy: { ...LENIENT_POLICY, usb: { allowed: false, audit_only: false } },
    });
    expect(result).toEqual({ status: "unknown", violations: [], missing: ["usb.allowed"] });
  });

  for (const { rule, policy, facts, violation } of singleRules) {
    describe(rule, () => {
      test("is violated when the policy demands it and the device falls short", () => {
        expect(evaluateCompliance({ platform: "linux", facts, policy })).toEqual({
          status: "non_compliant",
          violations: [violation],
          missing: [],
        });
      });

      test("holds when the device meets it", () => {
        const metFacts = Object.fromEntries(Object.keys(facts).map((fact) => [fact, true]));
        expect(evaluateCompliance({ platform: "linux", facts: metFacts, policy }).status).toBe("compliant");
      });

      test("is not checked when the policy does not demand it", () => {
        expect(evaluateCompliance({ platform: "linux", facts, policy: LENIENT_POLICY }).status).toBe(
          "compliant",
        );
      });

      test("is not violated but cannot be checked when the fact is not reported: unknown", () => {
        const result = evaluateCompliance({ platform: "linux", facts: { firewall_enabled: false }, policy });
        expect(result).toEqual({ status: "unknown", violations: [], missing: [rule] });
      });
    });
  }

  test("sorts every violation by severity, then by rule", () => {
    const result = evaluateCompliance({
      platform: "ios",
      osVersion: "iOS 14.8",
      facts: UNHEALTHY_FACTS,
      policy: STRICT_POLICY,
    });
    expect(result.status).toBe("non_compliant");
    expect(result.violations.map((violation) => [violation.severity, violation.rule])).toEqual([
      ["critical", "os_version"],
      ["critical", "storage.encryption_required"],
      ["high", "network.vpn_required"],
      ["high", "storage.external_storage_allowed"],
      ["high", "usb.allowed"],
      ["medium", "dlp.screenshot_allowed"],
    ]);
  });

  test("screen lock and firewall facts are reported but not judged", () => {
    const result = evaluateCompliance({
      platform: "macos",
      osVersion: "14.0",
      facts: { ...HEALTHY_FACTS, screen_lock_enabled: false, firewall_enabled: false },
      policy: STRICT_POLICY,
    });
    expect(result).toEqual({ status: "compliant", violations: [], missing: [] });
  });
});

describe("schemas", () => {
  test("SEVERITIES runs from least to most severe", () => {
    expect(SEVERITIES).toEqual(["low", "medium", "high", "critical"]);
  });

  test("DeviceFactsSchema takes optional booleans and nothing else", () => {
    expect(Value.Check(DeviceFactsSchema, {})).toBe(true);
    expect(Value.Check(DeviceFactsSchema, HEALTHY_FACTS)).toBe(true);
    expect(Value.Check(DeviceFactsSchema, { disk_encrypted: "yes" })).toBe(false);
    expect(Value.Check(DeviceFactsSchema, { disk_encrypted: true, root_detected: false })).toBe(false);
    expect(DeviceFactsSchema.description).toBeString();
    for (const property of Object.values(DeviceFactsSchema.properties))
      expect(property.description).toBeString();
  });

  test("every evaluated violation fits ViolationSchema", () => {
    const result = evaluateCompliance({
      platform: "android",
      osVersion: "Android 8",
      facts: UNHEALTHY_FACTS,
      policy: STRICT_POLICY,
    });
    expect(result.violations).toHaveLength(6);
    for (const violation of result.violations) expect(Value.Check(ViolationSchema, violation)).toBe(true);
    expect(Value.Check(ViolationSchema, { rule: "x", required: true, actual: 1, severity: "high" })).toBe(
      false,
    );
    expect(
      Value.Check(ViolationSchema, { rule: "x", required: true, actual: false, severity: "fatal" }),
    ).toBe(false);
  });

  test("ComplianceReportSchema accepts a report that was never checked", () => {
    const neverChecked = { status: "unknown", last_check: null, violations: [], missing: ["os_version"] };
    expect(Value.Check(ComplianceReportSchema, neverChecked)).toBe(true);
    expect(Value.Check(ComplianceReportSchema, { ...neverChecked, status: "broken" })).toBe(false);
  });
});
