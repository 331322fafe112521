import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  PolicyDataInputSchema,
  PolicyDataSchema,
  USB_DEVICE_CLASSES,
} from "../../../src/domain/policies/policy-document";
import { DEFAULT_POLICY_DATA } from "../../../src/domain/policies/policy-templates";
import { validatePolicyData } from "../../../src/domain/policies/validate-policy-document";

/** Every object schema and property schema under `schema`, with its path. */
function walk(schema: TSchema, path: string, visit: (schema: TSchema, path: string) => void): void {
  visit(schema, path);
  for (const [key, property] of Object.entries<TSchema>(schema.properties ?? {})) {
    walk(property, `${path}.${key}`, visit);
  }
  if (schema.items !== undefined) walk(schema.items, `${path}.items`, visit);
}

describe("policy document schemas", () => {
  test.each([
    ["complete", PolicyDataSchema],
    ["input", PolicyDataInputSchema],
  ] as const)("the %s schema closes every object and describes every property", (_, schema) => {
    walk(schema, "policy_data", (node, path) => {
      if (node.type === "object")
        expect({ path, closed: node.additionalProperties }).toEqual({ path, closed: false });
      expect({ path, description: typeof node.description }).toEqual({ path, description: "string" });
    });
  });

  test("the complete schema requires every setting (but the wipe section, which older versions lack); the input schema none", () => {
    walk(PolicyDataSchema, "policy_data", (node, path) => {
      if (node.type !== "object") return;
      const sections = Object.keys(node.properties);
      expect(node.required).toEqual(
        path === "policy_data" ? sections.filter((key) => key !== "wipe") : sections,
      );
    });
    walk(PolicyDataInputSchema, "policy_data", (node) => {
      if (node.type === "object") expect(node.required ?? []).toEqual([]);
    });
    expect(Value.Check(PolicyDataInputSchema, {})).toBe(true);
    expect(Value.Check(PolicyDataInputSchema, { usb: { audit_only: true } })).toBe(true);
    expect(Value.Check(PolicyDataSchema, { usb: { audit_only: true } })).toBe(false);
  });

  test("lists are bounded", () => {
    expect(PolicyDataSchema.properties.dlp.properties.sensitive_data_patterns).toMatchObject({
      maxItems: 100,
      items: { maxLength: 500 },
    });
    expect(PolicyDataSchema.properties.network.properties.allowed_domains).toMatchObject({
      maxItems: 1000,
      items: { maxLength: 253 },
    });
    expect(PolicyDataSchema.properties.usb.properties.whitelist).toMatchObject({ maxItems: 500 });
    expect(PolicyDataSchema.properties.storage.properties.max_file_size_mb).toMatchObject({
      minimum: 0,
      maximum: 1_048_576,
    });
  });

  test("the schema agrees with the validator on the USB class list and the whitelist format", () => {
    const usb = {
      ...DEFAULT_POLICY_DATA.usb,
      allowed_classes: [...USB_DEVICE_CLASSES],
      whitelist: ["046D:c52b"],
    };
    const document = { ...DEFAULT_POLICY_DATA, usb };
    expect(Value.Check(PolicyDataSchema, document)).toBe(true);
    expect(validatePolicyData(document).ok).toBe(true);
    const badWhitelist = { ...document, usb: { ...usb, whitelist: ["046d-c52b"] } };
    expect(Value.Check(PolicyDataSchema, badWhitelist)).toBe(false);
    expect(validatePolicyData(badWhitelist).ok).toBe(false);
  });

  test("whatever the validator accepts, the schema accepts", () => {
    const result = validatePolicyData({ dlp: { clipboard_sharing: false, clipboard_direction: "none" } });
    expect(result.ok && Value.Check(PolicyDataSchema, result.value)).toBe(true);
  });
});
