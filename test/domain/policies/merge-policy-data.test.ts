import { describe, expect, test } from "bun:test";
import { mergePolicyData } from "../../../src/domain/policies/merge-policy-data";
import { DEFAULT_POLICY_DATA, findPolicyTemplate } from "../../../src/domain/policies/policy-templates";

const strict = findPolicyTemplate("strict")?.policy_data ?? DEFAULT_POLICY_DATA;

describe("mergePolicyData", () => {
  test("overrides settings deeply and keeps the rest", () => {
    expect(mergePolicyData(strict, { dlp: { print_allowed: true }, storage: {} })).toEqual({
      ...strict,
      dlp: { ...strict.dlp, print_allowed: true },
    });
  });

  test("replaces arrays instead of concatenating them", () => {
    const merged = mergePolicyData(strict, { usb: { allowed_classes: ["audio"] } }) as typeof strict;
    expect(merged.usb.allowed_classes).toEqual(["audio"]);
  });

  test("undefined means missing, null and other values replace", () => {
    const merged = mergePolicyData(strict, { dlp: { print_allowed: undefined, screenshot_allowed: null } });
    expect(merged).toEqual({ ...strict, dlp: { ...strict.dlp, screenshot_allowed: null } });
  });

  test("keeps unknown keys and wrong types for the validator to report", () => {
    const merged = mergePolicyData(strict, { extra: 1, usb: "none", dlp: { watermark: true } });
    expect(merged).toMatchObject({ extra: 1, usb: "none", dlp: { watermark: true } });
  });

  test("returns a customization that is not an object as it is", () => {
    expect(mergePolicyData(strict, 5)).toBe(5);
    expect(mergePolicyData(strict, null)).toBeNull();
    const list = [1];
    expect(mergePolicyData(strict, list)).toBe(list);
  });

  test("a missing customization gives a copy of the base", () => {
    const merged = mergePolicyData(strict, undefined);
    expect(merged).toEqual(strict);
    expect(merged).not.toBe(strict);
  });

  test("the result shares no objects or arrays with its inputs", () => {
    const customizations = { network: { allowed_domains: ["a.example.com"] } };
    const merged = mergePolicyData(strict, customizations) as typeof strict;
    expect(merged.network.allowed_domains).not.toBe(customizations.network.allowed_domains);
    expect(merged.usb.allowed_classes).not.toBe(strict.usb.allowed_classes);
    expect(merged.dlp).not.toBe(strict.dlp);
    merged.usb.allowed_classes.push("audio");
    expect(strict.usb.allowed_classes).toEqual(["hid"]);
  });

  test("a __proto__ key stays an ordinary key", () => {
    const merged = mergePolicyData(strict, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toContain("__proto__");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
