import { describe, expect, test } from "bun:test";
import {
  type DescribablePolicy,
  describePolicyChanges,
  isSamePolicyDocument,
} from "../../../src/domain/policies/describe-policy-changes";
import type { PolicyData } from "../../../src/domain/policies/policy-document";
import { DEFAULT_POLICY_DATA } from "../../../src/domain/policies/policy-templates";

function policy(
  changes: Partial<Omit<DescribablePolicy, "policy_data">> = {},
  data: PolicyData = DEFAULT_POLICY_DATA,
) {
  return { name: "Office", description: "Laptops", ...changes, policy_data: structuredClone(data) };
}

function withData(change: (data: PolicyData) => void): PolicyData {
  const data = structuredClone(DEFAULT_POLICY_DATA);
  change(data);
  return data;
}

describe("describePolicyChanges", () => {
  test("nothing changed", () => {
    expect(describePolicyChanges(policy(), policy())).toEqual([]);
  });

  test("name and description, quoted", () => {
    expect(
      describePolicyChanges(policy({ name: "Old" }), policy({ name: "New", description: "All laptops" })),
    ).toEqual(['name: "Old" -> "New"', 'description: "Laptops" -> "All laptops"']);
  });

  test("scalar settings, in schema order", () => {
    const after = withData((data) => {
      data.storage.max_file_size_mb = 25;
      data.dlp.screenshot_allowed = false;
      data.dlp.clipboard_direction = "both";
    });
    expect(describePolicyChanges(policy(), policy({}, after))).toEqual([
      'dlp.clipboard_direction: "personal_to_work" -> "both"',
      "dlp.screenshot_allowed: true -> false",
      "storage.max_file_size_mb: 100 -> 25",
    ]);
  });

  test("arrays list each added and removed item", () => {
    const before = withData((data) => {
      data.network.allowed_domains = ["old.example.com", "keep.example.com"];
    });
    const after = withData((data) => {
      data.network.allowed_domains = ["keep.example.com", "*.example.com", "new.example.com"];
    });
    expect(describePolicyChanges(policy({}, before), policy({}, after))).toEqual([
      'network.allowed_domains: added "*.example.com"',
      'network.allowed_domains: added "new.example.com"',
      'network.allowed_domains: removed "old.example.com"',
    ]);
  });

  test("an order-only change is one line", () => {
    const before = withData((data) => {
      data.usb.allowed_classes = ["hid", "audio"];
    });
    const after = withData((data) => {
      data.usb.allowed_classes = ["audio", "hid"];
    });
    expect(describePolicyChanges(policy({}, before), policy({}, after))).toEqual([
      "usb.allowed_classes: reordered",
    ]);
  });

  test("sections come in dlp, network, usb, storage order", () => {
    const after = withData((data) => {
      data.storage.encryption_required = false;
      data.usb.audit_only = true;
      data.network.split_tunnel = false;
      data.dlp.print_allowed = false;
    });
    expect(describePolicyChanges(policy(), policy({ name: "Renamed" }, after))).toEqual([
      'name: "Office" -> "Renamed"',
      "dlp.print_allowed: true -> false",
      "network.split_tunnel: true -> false",
      "usb.audit_only: false -> true",
      "storage.encryption_required: true -> false",
    ]);
  });
});

describe("isSamePolicyDocument", () => {
  test("compares settings deeply, ignoring key order", () => {
    const { dlp, network, usb, storage, wipe } = structuredClone(DEFAULT_POLICY_DATA);
    expect(isSamePolicyDocument(DEFAULT_POLICY_DATA, { wipe, storage, usb, network, dlp })).toBe(true);
  });

  test("any changed setting or array item makes them differ", () => {
    const changes: ((data: PolicyData) => void)[] = [
      (data) => {
        data.usb.allowed = true;
      },
      (data) => {
        data.dlp.sensitive_data_patterns.push("x");
      },
      (data) => {
        data.usb.allowed_classes.reverse();
      },
    ];
    for (const change of changes)
      expect(isSamePolicyDocument(DEFAULT_POLICY_DATA, withData(change))).toBe(false);
  });
});
