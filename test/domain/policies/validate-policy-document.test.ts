import { describe, expect, test } from "bun:test";
import type { PolicyData } from "../../../src/domain/policies/policy-document";
import { DEFAULT_POLICY_DATA, findPolicyTemplate } from "../../../src/domain/policies/policy-templates";
import { validatePolicyData } from "../../../src/domain/policies/validate-policy-document";

function errorsOf(input: unknown, options?: Parameters<typeof validatePolicyData>[1]) {
  const result = validatePolicyData(input, options);
  if (result.ok) throw new Error("expected the document to be rejected");
  return result.errors;
}

function acceptedValue(input: unknown, options?: Parameters<typeof validatePolicyData>[1]): PolicyData {
  const result = validatePolicyData(input, options);
  if (!result.ok) throw new Error(`expected a valid document, got ${JSON.stringify(result.errors)}`);
  return result.value;
}

function patternErrors(patterns: string[]) {
  return errorsOf({ dlp: { sensitive_data_patterns: patterns } });
}

const strict = findPolicyTemplate("strict")?.policy_data as PolicyData;

describe("defaults", () => {
  test("an empty or missing document is the default document", () => {
    expect(acceptedValue({})).toEqual(DEFAULT_POLICY_DATA);
    expect(acceptedValue(undefined)).toEqual(DEFAULT_POLICY_DATA);
  });

  test("omitted settings keep their defaults, given ones win", () => {
    const value = acceptedValue({ dlp: { screenshot_allowed: false }, storage: { max_file_size_mb: 5 } });
    expect(value.dlp).toEqual({ ...DEFAULT_POLICY_DATA.dlp, screenshot_allowed: false });
    expect(value.storage).toEqual({ ...DEFAULT_POLICY_DATA.storage, max_file_size_mb: 5 });
    expect(value.network).toEqual(DEFAULT_POLICY_DATA.network);
  });

  test("omitted settings come from the base when one is given", () => {
    const value = acceptedValue({ usb: { audit_only: true } }, { base: strict });
    expect(value).toEqual({ ...strict, usb: { ...strict.usb, audit_only: true } });
  });

  test("arrays replace the base's arrays", () => {
    const value = acceptedValue({ network: { blocked_domains: ["bad.example.com"] } }, { base: strict });
    expect(value.network.blocked_domains).toEqual(["bad.example.com"]);
  });

  test("the result is a fresh object that shares nothing with the base or the input", () => {
    const input = { network: { allowed_domains: ["a.example.com"] } };
    const value = acceptedValue(input);
    expect(value).not.toBe(DEFAULT_POLICY_DATA);
    expect(value.dlp.sensitive_data_patterns).not.toBe(DEFAULT_POLICY_DATA.dlp.sensitive_data_patterns);
    expect(value.network.allowed_domains).not.toBe(input.network.allowed_domains);
    value.dlp.sensitive_data_patterns.push("x");
    expect(DEFAULT_POLICY_DATA.dlp.sensitive_data_patterns).not.toContain("x");
  });
});

describe("shape", () => {
  test("a document that is not an object", () => {
    expect(errorsOf(42)).toEqual([{ field: "policy_data", message: "must be an object", received: 42 }]);
    expect(errorsOf(null)).toEqual([{ field: "policy_data", message: "must be an object", received: null }]);
    expect(errorsOf([])).toEqual([{ field: "policy_data", message: "must be an object", received: [] }]);
  });

  test("a section that is not an object", () => {
    expect(errorsOf({ usb: "no" })).toEqual([
      { field: "policy_data.usb", message: "must be an object", received: "no" },
    ]);
  });

  test("wrong scalar types, all reported at once", () => {
    expect(
      errorsOf({
        dlp: { screenshot_allowed: "yes", clipboard_direction: "sideways" },
        network: { vpn_required: null, allowed_domains: "example.com" },
        storage: { max_file_size_mb: 1.5 },
      }),
    ).toEqual([
      {
        field: "policy_data.dlp.clipboard_direction",
        message: "must be one of none, work_to_personal, personal_to_work, both",
        received: "sideways",
      },
      { field: "policy_data.dlp.screenshot_allowed", message: "must be a boolean", received: "yes" },
      { field: "policy_data.network.vpn_required", message: "must be a boolean", received: null },
      { field: "policy_data.network.allowed_domains", message: "must be an array", received: "example.com" },
      { field: "policy_data.storage.max_file_size_mb", message: "must be an integer", received: 1.5 },
    ]);
  });

  test("array items are addressed by index", () => {
    expect(errorsOf({ dlp: { sensitive_data_patterns: ["\\d{4}", 7] } })).toEqual([
      { field: "policy_data.dlp.sensitive_data_patterns.1", message: "must be a string", received: 7 },
    ]);
  });

  test("unknown keys at any level", () => {
    expect(errorsOf({ firewall: {}, dlp: { watermark: true } })).toEqual([
      { field: "policy_data.dlp.watermark", message: "unknown field", received: true },
      { field: "policy_data.firewall", message: "unknown field", received: {} },
    ]);
  });

  test("a __proto__ key is an unknown field, not a prototype change", () => {
    const errors = errorsOf(JSON.parse('{"dlp": {"__proto__": {"print_allowed": "x"}}}'));
    expect(errors).toEqual([
      { field: "policy_data.dlp.__proto__", message: "unknown field", received: { print_allowed: "x" } },
    ]);
  });

  test("integer bounds", () => {
    expect(errorsOf({ storage: { max_file_size_mb: -1 } })).toEqual([
      { field: "policy_data.storage.max_file_size_mb", message: "must be at least 0", received: -1 },
    ]);
    expect(errorsOf({ storage: { max_file_size_mb: 1_048_577 } })).toEqual([
      {
        field: "policy_data.storage.max_file_size_mb",
        message: "must be at most 1048576",
        received: 1_048_577,
      },
    ]);
    expect(acceptedValue({ storage: { max_file_size_mb: 0 } }).storage.max_file_size_mb).toBe(0);
  });

  test("list and string sizes", () => {
    const tooMany = Array.from({ length: 101 }, (_, index) => `pattern${index}`);
    expect(errorsOf({ dlp: { sensitive_data_patterns: tooMany } })).toEqual([
      {
        field: "policy_data.dlp.sensitive_data_patterns",
        message: "must be at most 100 items",
        received: tooMany,
      },
    ]);
    const tooLong = "a".repeat(501);
    expect(patternErrors([tooLong])).toEqual([
      {
        field: "policy_data.dlp.sensitive_data_patterns.0",
        message: "must be at most 500 characters",
        received: tooLong,
      },
    ]);
    expect(patternErrors([""])).toEqual([
      { field: "policy_data.dlp.sensitive_data_patterns.0", message: "must not be empty", received: "" },
    ]);
    const domains = Array.from({ length: 1001 }, (_, index) => `host${index}.example.com`);
    expect(errorsOf({ network: { blocked_domains: domains } })[0]?.message).toBe(
      "must be at most 1000 items",
    );
    const usbIds = Array.from({ length: 501 }, (_, index) => `046d:${index.toString(16).padStart(4, "0")}`);
    expect(errorsOf({ usb: { whitelist: usbIds } })[0]?.message).toBe("must be at most 500 items");
  });

  test("the field prefix can be changed", () => {
    expect(errorsOf({ dlp: { print_allowed: 1 } }, { fieldPrefix: "customizations" })).toEqual([
      { field: "customizations.dlp.print_allowed", message: "must be a boolean", received: 1 },
    ]);
  });
});

describe("sensitive data patterns", () => {
  test("valid patterns pass", () => {
    const patterns = [
      "\\b\\d{3}-\\d{2}-\\d{4}\\b",
      "(?:\\d{4}[ -]?){3}\\d{4}",
      "^[A-Z]{2}\\d+$",
      "(cat|dog)+",
    ];
    expect(acceptedValue({ dlp: { sensitive_data_patterns: patterns } }).dlp.sensitive_data_patterns).toEqual(
      patterns,
    );
  });

  test("a pattern RE2 does not accept is refused with why, at its index", () => {
    expect(patternErrors(["\\d+", "(abc", "a(?=b)"])).toEqual([
      {
        field: "policy_data.dlp.sensitive_data_patterns.1",
        message: "is not RE2 syntax: missing closing ): `(abc`",
        received: "(abc",
      },
      {
        field: "policy_data.dlp.sensitive_data_patterns.2",
        message:
          "is not RE2 syntax: lookahead (?=...) is not supported; patterns run on a linear-time engine",
        received: "a(?=b)",
      },
    ]);
  });

  test("nested and overlapping repetitions, which a linear-time engine runs safely, pass", () => {
    const patterns = ["(a+)+$", "^(a|aa)+$", "(\\w+\\s?)*", "\\d*\\d*\\d*\\d*x"];
    expect(acceptedValue({ dlp: { sensitive_data_patterns: patterns } }).dlp.sensitive_data_patterns).toEqual(
      patterns,
    );
  });

  test("duplicates", () => {
    expect(patternErrors(["\\d+", "x", "\\d+"])).toEqual([
      { field: "policy_data.dlp.sensitive_data_patterns.2", message: "duplicate value", received: "\\d+" },
    ]);
  });
});

describe("clipboard", () => {
  test("direction must be none when sharing is off", () => {
    expect(errorsOf({ dlp: { clipboard_sharing: false, clipboard_direction: "both" } })).toEqual([
      {
        field: "policy_data.dlp.clipboard_direction",
        message: "must be none when clipboard_sharing is false",
        received: "both",
      },
    ]);
  });

  test("direction must not be none when sharing is on", () => {
    expect(errorsOf({ dlp: { clipboard_sharing: true, clipboard_direction: "none" } })).toEqual([
      {
        field: "policy_data.dlp.clipboard_direction",
        message: "must not be none when clipboard_sharing is true",
        received: "none",
      },
    ]);
  });

  test("the rule applies to the merged document", () => {
    expect(DEFAULT_POLICY_DATA.dlp.clipboard_sharing).toBe(true);
    expect(errorsOf({ dlp: { clipboard_sharing: false } })[0]?.field).toBe(
      "policy_data.dlp.clipboard_direction",
    );
    expect(
      acceptedValue({ dlp: { clipboard_sharing: false, clipboard_direction: "none" } }).dlp.clipboard_sharing,
    ).toBe(false);
    expect(
      acceptedValue({ dlp: { clipboard_sharing: true, clipboard_direction: "both" } }, { base: strict }).dlp,
    ).toEqual({
      ...strict.dlp,
      clipboard_sharing: true,
      clipboard_direction: "both",
    });
  });

  test("no consistency error on top of a type error", () => {
    expect(errorsOf({ dlp: { clipboard_sharing: false, clipboard_direction: "up" } })).toHaveLength(1);
  });
});

describe("domains", () => {
  test.each([
    "example.com",
    "*.example.com",
    "a-b.example.co.uk",
    "xn--bcher-kva.example",
    "EXAMPLE.COM",
    "a.b1",
  ])("%p is accepted", (domain) => {
    expect(acceptedValue({ network: { allowed_domains: [domain] } }).network.allowed_domains).toEqual([
      domain,
    ]);
  });

  test.each([
    "localhost",
    "example",
    "10.0.0.1",
    "-bad.example.com",
    "bad-.example.com",
    "under_score.example.com",
    "example.com.",
    ".example.com",
    "exa mple.com",
    "https://example.com",
    `${"a".repeat(64)}.example.com`,
  ])("%p is not a domain name", (domain) => {
    expect(errorsOf({ network: { blocked_domains: [domain] } })).toEqual([
      {
        field: "policy_data.network.blocked_domains.0",
        message: "must be a domain name such as example.com or *.example.com",
        received: domain,
      },
    ]);
  });

  test.each(["*example.com", "a.*.example.com", "*.*.example.com", "**.example.com", "*"])(
    "misplaced wildcard %p",
    (domain) => {
      expect(errorsOf({ network: { allowed_domains: ["ok.example.com", domain] } })).toEqual([
        {
          field: "policy_data.network.allowed_domains.1",
          message: "a wildcard is only allowed as the whole first label, as in *.example.com",
          received: domain,
        },
      ]);
    },
  );

  test("a domain name longer than 253 characters", () => {
    const long = `${Array.from({ length: 4 }, () => "a".repeat(63)).join(".")}.com`;
    expect(errorsOf({ network: { allowed_domains: [long] } })[0]?.message).toBe(
      "must be at most 253 characters",
    );
  });

  test("duplicates ignore case", () => {
    expect(errorsOf({ network: { allowed_domains: ["example.com", "Example.COM"] } })).toEqual([
      { field: "policy_data.network.allowed_domains.1", message: "duplicate value", received: "Example.COM" },
    ]);
  });

  test("a domain both allowed and blocked is an error on the blocked entry", () => {
    expect(
      errorsOf({
        network: { allowed_domains: ["*.example.com"], blocked_domains: ["x.test", "*.EXAMPLE.com"] },
      }),
    ).toEqual([
      {
        field: "policy_data.network.blocked_domains.1",
        message: "must not also be in allowed_domains",
        received: "*.EXAMPLE.com",
      },
    ]);
  });
});

describe("usb", () => {
  test("whitelist entries are vendor:product in hex, any case", () => {
    expect(acceptedValue({ usb: { whitelist: ["046d:c52b", "1D6B:0002"] } }).usb.whitelist).toEqual([
      "046d:c52b",
      "1D6B:0002",
    ]);
  });

  test.each(["046d", "046d:c52", "046d-c52b", "046g:c52b", "046d:c52b0", " 046d:c52b", ""])(
    "%p is not a USB id",
    (id) => {
      const errors = errorsOf({ usb: { whitelist: [id] } });
      expect(errors).toEqual([
        {
          field: "policy_data.usb.whitelist.0",
          message: "must be vendor:product with four hex digits each, e.g. 046d:c52b",
          received: id,
        },
      ]);
    },
  );

  test("whitelist duplicates ignore case", () => {
    expect(errorsOf({ usb: { whitelist: ["046d:c52b", "046D:C52B"] } })).toEqual([
      { field: "policy_data.usb.whitelist.1", message: "duplicate value", received: "046D:C52B" },
    ]);
  });

  test("allowed classes come from a fixed list, without duplicates", () => {
    expect(errorsOf({ usb: { allowed_classes: ["hid", "keyboard", "hid"] } })).toEqual([
      {
        field: "policy_data.usb.allowed_classes.1",
        message:
          "must be one of hid, audio, video, mass_storage, printer, communications, smart_card, wireless, hub, imaging, other",
        received: "keyboard",
      },
      { field: "policy_data.usb.allowed_classes.2", message: "duplicate value", received: "hid" },
    ]);
  });
});
