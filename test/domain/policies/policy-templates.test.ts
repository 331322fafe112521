import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { PolicyDataSchema } from "../../../src/domain/policies/policy-document";
import {
  DEFAULT_POLICY_DATA,
  findPolicyTemplate,
  POLICY_TEMPLATES,
} from "../../../src/domain/policies/policy-templates";
import { validatePolicyData } from "../../../src/domain/policies/validate-policy-document";
import { compileRe2Pattern } from "../../../src/lib/re2-pattern";

function template(id: string) {
  const found = findPolicyTemplate(id);
  if (found === undefined) throw new Error(`no template ${id}`);
  return found;
}

describe("policy templates", () => {
  test("the ids are strict, balanced and byod", () => {
    expect(POLICY_TEMPLATES.map((item) => item.id)).toEqual(["strict", "balanced", "byod"]);
    expect(findPolicyTemplate("permissive")).toBeUndefined();
  });

  test.each(["strict", "balanced", "byod"])("%s is complete and passes validation unchanged", (id) => {
    const { name, description, recommended_for, policy_data } = template(id);
    expect(name.length).toBeGreaterThan(0);
    expect(description.length).toBeGreaterThan(0);
    expect(recommended_for.length).toBeGreaterThan(0);
    expect(Value.Check(PolicyDataSchema, policy_data)).toBe(true);
    expect(validatePolicyData(policy_data)).toEqual({ ok: true, value: policy_data });
  });

  test("strict locks down what byod leaves open", () => {
    const strict = template("strict").policy_data;
    const byod = template("byod").policy_data;
    expect(strict.dlp).toMatchObject({
      clipboard_sharing: false,
      clipboard_direction: "none",
      screenshot_allowed: false,
      print_allowed: false,
    });
    expect(strict.network).toMatchObject({ vpn_required: true, vpn_always_on: true, split_tunnel: false });
    expect(strict.usb).toMatchObject({ allowed: false, allowed_classes: ["hid"], audit_only: false });
    expect(strict.storage).toMatchObject({
      encryption_required: true,
      external_storage_allowed: false,
      cloud_sync_allowed: false,
    });
    expect(strict.storage.max_file_size_mb).toBeLessThan(byod.storage.max_file_size_mb);
    expect(strict.dlp.sensitive_data_patterns.length).toBeGreaterThan(
      byod.dlp.sensitive_data_patterns.length,
    );
    expect(byod.dlp.clipboard_sharing).toBe(true);
    expect(byod.network.vpn_required).toBe(false);
    expect(byod.usb.allowed).toBe(true);
    expect(byod.storage.encryption_required).toBe(true);
  });

  test("strict's patterns find credit card and US social security numbers, and not plain text", () => {
    // Compiled as devices compile them, with the RE2 engine.
    const patterns = template("strict").policy_data.dlp.sensitive_data_patterns.map((source) => {
      const compiled = compileRe2Pattern(source);
      if (!compiled.ok) throw new Error(`${source} ${compiled.problem}`);
      return compiled.pattern;
    });
    const isSensitive = (text: string) => patterns.some((pattern) => pattern.test(text));
    expect(isSensitive("card 4111 1111 1111 1111 exp 12/30")).toBe(true);
    expect(isSensitive("ssn: 123-45-6789")).toBe(true);
    expect(isSensitive("invoice 2024-05-01, 3 items")).toBe(false);
    // Issued: area 001-899 but 666, group 01-99, serial 0001-9999.
    for (const ssn of ["001-01-0001", "899-99-9999", "665-10-1000", "667-10-1000", "606-60-6066"]) {
      expect({ ssn, found: isSensitive(`ssn: ${ssn}`) }).toEqual({ ssn, found: true });
    }
    for (const ssn of ["000-12-3456", "666-12-3456", "900-12-3456", "123-00-4567", "123-45-0000"]) {
      expect({ ssn, found: isSensitive(`ssn: ${ssn}`) }).toEqual({ ssn, found: false });
    }
  });

  test("the default document is balanced's, and nobody can change it", () => {
    expect(DEFAULT_POLICY_DATA).toEqual(template("balanced").policy_data);
    expect(() => {
      DEFAULT_POLICY_DATA.dlp.print_allowed = false;
    }).toThrow(TypeError);
    expect(() => {
      DEFAULT_POLICY_DATA.network.blocked_domains.push("example.com");
    }).toThrow(TypeError);
    expect(() => {
      template("strict").recommended_for.push("everyone");
    }).toThrow(TypeError);
  });
});
