import { afterAll, describe, expect, test } from "bun:test";
import { findPolicyTemplate } from "../../src/domain/policies/policy-templates";
import { dereference } from "../helpers/openapi-sample";
import { createTestApp } from "../helpers/test-app";

const t = await createTestApp();
afterAll(() => t.close());

const org = await t.createOrganization();
const token = org.adminToken;
const BALANCED = findPolicyTemplate("balanced")?.policy_data;
const DOMAIN_MESSAGE = "must be a domain name such as example.com or *.example.com";
const USB_ID_MESSAGE = "must be vendor:product with four hex digits each, e.g. 046d:c52b";

/** A policy_data that breaks one rule, and every error it must produce (fields relative to policy_data). */
const RULES: {
  rule: string;
  policyData: unknown;
  errors: { field: string; message: unknown; received?: unknown }[];
}[] = [
  {
    rule: "settings have their types",
    policyData: { dlp: { screenshot_allowed: "no" }, storage: { encryption_required: 1 } },
    errors: [
      { field: "dlp.screenshot_allowed", message: "must be a boolean", received: "no" },
      { field: "storage.encryption_required", message: "must be a boolean", received: 1 },
    ],
  },
  {
    rule: "unknown sections and settings are rejected",
    policyData: { dlp: { watermark: true }, firewall: {} },
    errors: [
      { field: "dlp.watermark", message: "unknown field", received: true },
      { field: "firewall", message: "unknown field", received: {} },
    ],
  },
  {
    rule: "sections are objects",
    policyData: { usb: "off" },
    errors: [{ field: "usb", message: "must be an object", received: "off" }],
  },
  {
    rule: "clipboard_direction is one of its values",
    policyData: { dlp: { clipboard_direction: "sideways" } },
    errors: [
      {
        field: "dlp.clipboard_direction",
        message: "must be one of none, work_to_personal, personal_to_work, both",
        received: "sideways",
      },
    ],
  },
  {
    rule: "clipboard_direction is none when clipboard_sharing is false",
    policyData: { dlp: { clipboard_sharing: false, clipboard_direction: "both" } },
    errors: [
      {
        field: "dlp.clipboard_direction",
        message: "must be none when clipboard_sharing is false",
        received: "both",
      },
    ],
  },
  {
    rule: "clipboard_direction is not none when clipboard_sharing is true",
    policyData: { dlp: { clipboard_sharing: true, clipboard_direction: "none" } },
    errors: [
      {
        field: "dlp.clipboard_direction",
        message: "must not be none when clipboard_sharing is true",
        received: "none",
      },
    ],
  },
  {
    rule: "sensitive data patterns are RE2 syntax",
    policyData: { dlp: { sensitive_data_patterns: ["\\d{16}", "([a-z"] } },
    errors: [
      {
        field: "dlp.sensitive_data_patterns.1",
        message: "is not RE2 syntax: missing closing ]: `[a-z`",
        received: "([a-z",
      },
    ],
  },
  {
    rule: "patterns whose repetitions a linear-time engine cannot bound are refused",
    policyData: {
      dlp: { sensitive_data_patterns: ["^(a{1,1000}){1,1000}$", "\\d{1001}", ".{1000}".repeat(11)] },
    },
    errors: [
      {
        field: "dlp.sensitive_data_patterns.0",
        message:
          "is too large for RE2: nested repetitions multiply their counts, and this program would be over RE2's size limit",
        received: "^(a{1,1000}){1,1000}$",
      },
      {
        field: "dlp.sensitive_data_patterns.1",
        message:
          "is not RE2 syntax: invalid repeat count: `{1001}` (RE2 repeats at most 1000 times, nested repetitions multiplied together)",
        received: "\\d{1001}",
      },
      {
        field: "dlp.sensitive_data_patterns.2",
        message:
          "is too large: it compiles to 11002 RE2 instructions, more than 10000; matching time grows with the program",
        received: ".{1000}".repeat(11),
      },
    ],
  },
  {
    rule: "JavaScript-only constructs (lookaround, backreferences) are refused",
    policyData: { dlp: { sensitive_data_patterns: ["\\d{3}(?=-\\d{4})", "(?<=\\$)\\d+", "(['\"]).+?\\1"] } },
    errors: [
      {
        field: "dlp.sensitive_data_patterns.0",
        message:
          "is not RE2 syntax: lookahead (?=...) is not supported; patterns run on a linear-time engine",
        received: "\\d{3}(?=-\\d{4})",
      },
      {
        field: "dlp.sensitive_data_patterns.1",
        message:
          "is not RE2 syntax: lookbehind (?<=...) is not supported; patterns run on a linear-time engine",
        received: "(?<=\\$)\\d+",
      },
      {
        field: "dlp.sensitive_data_patterns.2",
        message:
          "is not RE2 syntax: backreference \\1 is not supported; patterns run on a linear-time engine",
        received: "(['\"]).+?\\1",
      },
    ],
  },
  {
    rule: "USB ids are vvvv:pppp in hex, without duplicates",
    policyData: { usb: { whitelist: ["046d:c52b", "046d-c52b", "zzzz:0001", "046D:C52B"] } },
    errors: [
      { field: "usb.whitelist.1", message: USB_ID_MESSAGE, received: "046d-c52b" },
      { field: "usb.whitelist.2", message: USB_ID_MESSAGE, received: "zzzz:0001" },
      { field: "usb.whitelist.3", message: "duplicate value", received: "046D:C52B" },
    ],
  },
  {
    rule: "USB classes are known ones",
    policyData: { usb: { allowed_classes: ["hid", "floppy"] } },
    errors: [
      {
        field: "usb.allowed_classes.1",
        message:
          "must be one of hid, audio, video, mass_storage, printer, communications, smart_card, wireless, hub, imaging, other",
        received: "floppy",
      },
    ],
  },
  {
    rule: "domains are well formed; a wildcard only as the first label",
    policyData: {
      network: {
        allowed_domains: [
          "*.example.com",
          "intranet.example.org",
          "not a domain",
          "*.*.example.com",
          "localhost",
        ],
      },
    },
    errors: [
      { field: "network.allowed_domains.2", message: DOMAIN_MESSAGE, received: "not a domain" },
      {
        field: "network.allowed_domains.3",
        message: "a wildcard is only allowed as the whole first label, as in *.example.com",
        received: "*.*.example.com",
      },
      { field: "network.allowed_domains.4", message: DOMAIN_MESSAGE, received: "localhost" },
    ],
  },
  {
    rule: "a domain is not both allowed and blocked",
    policyData: { network: { allowed_domains: ["example.com"], blocked_domains: ["EXAMPLE.com"] } },
    errors: [
      {
        field: "network.blocked_domains.0",
        message: "must not also be in allowed_domains",
        received: "EXAMPLE.com",
      },
    ],
  },
  {
    rule: "max_file_size_mb is a non-negative integer",
    policyData: { storage: { max_file_size_mb: -1 } },
    errors: [{ field: "storage.max_file_size_mb", message: "must be at least 0", received: -1 }],
  },
  {
    rule: "max_file_size_mb is not fractional",
    policyData: { storage: { max_file_size_mb: 1.5 } },
    errors: [{ field: "storage.max_file_size_mb", message: "must be an integer", received: 1.5 }],
  },
  {
    rule: "max_file_size_mb is not a string",
    policyData: { storage: { max_file_size_mb: "10" } },
    errors: [{ field: "storage.max_file_size_mb", message: "must be an integer", received: "10" }],
  },
];

function withPrefix(prefix: string, errors: (typeof RULES)[number]["errors"]) {
  return errors.map((error) => ({ ...error, field: `${prefix}.${error.field}` }));
}

describe("policy_data rules, on create", () => {
  for (const { rule, policyData, errors } of RULES) {
    test(rule, async () => {
      const response = await t.request("POST", "/api/v1/policies", {
        token,
        body: { name: `Rule: ${rule}`, policy_data: policyData },
      });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe(400);
      expect(response.body.reason).toBe("policy_invalid");
      expect(response.body.errors).toEqual(withPrefix("policy_data", errors));
    });
  }

  test("policy_data itself must be an object", async () => {
    const response = await t.request("POST", "/api/v1/policies", {
      token,
      body: { name: "Scalar", policy_data: 5 },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { field: "policy_data", message: "must be an object", received: 5 },
    ]);
  });

  test("every problem is reported at once, and nothing is created", async () => {
    const before = await t.request("GET", "/api/v1/policies", { token });
    const response = await t.request("POST", "/api/v1/policies", {
      token,
      body: {
        name: "Many problems",
        policy_data: {
          dlp: { print_allowed: "yes", sensitive_data_patterns: ["(x)\\1"] },
          usb: { whitelist: ["nope"] },
          storage: { max_file_size_mb: -5 },
        },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual([
      "policy_data.dlp.print_allowed",
      "policy_data.storage.max_file_size_mb",
      "policy_data.dlp.sensitive_data_patterns.0",
      "policy_data.usb.whitelist.0",
    ]);
    expect(response.body.details).toContain("policy_data.dlp.print_allowed: must be a boolean");
    const after = await t.request("GET", "/api/v1/policies", { token });
    expect(after.body.total).toBe(before.body.total);
  });

  test("wipe.work_paths: home and absolute paths with globs pass; system folders, .. and ** are refused", async () => {
    const accepted = await t.request("POST", "/api/v1/policies", {
      token,
      body: {
        name: "Work paths",
        policy_data: {
          wipe: { work_paths: ["~/Work", "~/.mozilla/firefox/*.work", "/srv/projects/*/private"] },
        },
      },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body.policy_data.wipe.work_paths).toEqual([
      "~/Work",
      "~/.mozilla/firefox/*.work",
      "/srv/projects/*/private",
    ]);
    const refused = await t.request("POST", "/api/v1/policies", {
      token,
      body: {
        name: "Bad work paths",
        policy_data: {
          wipe: {
            work_paths: [
              "Work",
              "/etc/ssl",
              "~/../root",
              "~/a/**/b",
              "/",
              "~/*",
              "~/Work",
              "~/Work",
              "/e?c/x",
              "/home",
              "/var/lib/app",
              "/root/x",
              "/*/ann",
            ],
          },
        },
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.reason).toBe("policy_invalid");
    expect(
      refused.body.errors.map((error: { field: string; message: string }) => [error.field, error.message]),
    ).toEqual([
      // The shape is checked first, then the rules.
      ["policy_data.wipe.work_paths.4", "must be at least 2 characters"],
      ["policy_data.wipe.work_paths.0", "must start with / (an absolute path) or ~/ (in each user's home)"],
      ["policy_data.wipe.work_paths.1", "must not be in /etc: a wipe erases work data, never the system"],
      [
        "policy_data.wipe.work_paths.2",
        "must name a folder or file below / or ~/, without empty, . or .. components (and no trailing /)",
      ],
      ["policy_data.wipe.work_paths.3", "** is not supported: write one glob per level (~/x/*/y)"],
      ["policy_data.wipe.work_paths.5", "must not match a whole home (~/*)"],
      [
        "policy_data.wipe.work_paths.8",
        "must start with a folder named in full (/srv/*/work, not /s*): a pattern there could match the system",
      ],
      [
        "policy_data.wipe.work_paths.9",
        "must name a folder inside /home (/home itself holds more than work data)",
      ],
      ["policy_data.wipe.work_paths.10", "must not be in /var: a wipe erases work data, never the system"],
      ["policy_data.wipe.work_paths.11", "must not be in /root: a wipe erases work data, never the system"],
      [
        "policy_data.wipe.work_paths.12",
        "must start with a folder named in full (/srv/*/work, not /s*): a pattern there could match the system",
      ],
      // Duplicates are named after every other problem.
      ["policy_data.wipe.work_paths.7", "duplicate value"],
    ]);
  });

  test("valid wildcard domains, USB ids and patterns are accepted", async () => {
    const response = await t.request("POST", "/api/v1/policies", {
      token,
      body: {
        name: "All valid",
        policy_data: {
          dlp: {
            clipboard_sharing: false,
            clipboard_direction: "none",
            sensitive_data_patterns: ["\\bSECRET-\\d{6}\\b"],
          },
          network: {
            allowed_domains: ["*.example.com", "example.org"],
            blocked_domains: ["bad.example.net"],
          },
          usb: { whitelist: ["046d:c52b", "1D6B:0002"] },
          storage: { max_file_size_mb: 0 },
        },
      },
    });
    expect(response.status).toBe(201);
    expect(response.body.policy_data.usb.whitelist).toEqual(["046d:c52b", "1D6B:0002"]);
  });
});

/** Patterns a backtracking engine takes exponential time on, and ordinary RE2 ones: all fine for RE2. */
const RE2_PATTERNS = [
  "\\d*\\d*\\d*\\d*\\d*\\d*x",
  "(a+)+$",
  "^(a|aa)+$",
  "^(a{1,10}){1,100}$",
  "(?i)\\bconfidential\\b",
  "\\x{20AC}\\s?\\d+",
];

describe("RE2 patterns are accepted", () => {
  test("on create, validate and update", async () => {
    const created = await t.request("POST", "/api/v1/policies", {
      token,
      body: { name: "RE2 patterns", policy_data: { dlp: { sensitive_data_patterns: RE2_PATTERNS } } },
    });
    expect(created.status).toBe(201);
    expect(created.body.policy_data.dlp.sensitive_data_patterns).toEqual(RE2_PATTERNS);

    const validated = await t.request("POST", "/api/v1/policies/validate", {
      token,
      body: { policy_data: { dlp: { sensitive_data_patterns: RE2_PATTERNS } } },
    });
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ valid: true, errors: [] });

    const updated = await t.request("PUT", `/api/v1/policies/${created.body.id}`, {
      token,
      body: { policy_data: { dlp: { sensitive_data_patterns: RE2_PATTERNS.toReversed() } } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.version).toBe(2);
  });
});

describe("the same rules on update and from-template", () => {
  test("a wrong type in a PUT is reported with its dotted path, and no version is written", async () => {
    const created = await t.request("POST", "/api/v1/policies", { token, body: { name: "Update target" } });
    const response = await t.request("PUT", `/api/v1/policies/${created.body.id}`, {
      token,
      body: { policy_data: { dlp: { screenshot_allowed: "no" }, usb: { whitelist: ["x"] } } },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { field: "policy_data.dlp.screenshot_allowed", message: "must be a boolean", received: "no" },
      { field: "policy_data.usb.whitelist.0", message: USB_ID_MESSAGE, received: "x" },
    ]);
    const current = await t.request("GET", `/api/v1/policies/${created.body.id}`, { token });
    expect(current.body.version).toBe(1);
  });

  test("a PUT with a pattern RE2 refuses names its index and why, and writes no version", async () => {
    const created = await t.request("POST", "/api/v1/policies", { token, body: { name: "Pattern update" } });
    const patterns = ["\\bSECRET\\b", "^(a{1,1000}){1,1000}$", "\\d{4}(?!\\d)"];
    const response = await t.request("PUT", `/api/v1/policies/${created.body.id}`, {
      token,
      body: { policy_data: { dlp: { sensitive_data_patterns: patterns } } },
    });
    expect(response.status).toBe(400);
    expect(response.body.reason).toBe("policy_invalid");
    expect(response.body.errors).toEqual([
      {
        field: "policy_data.dlp.sensitive_data_patterns.1",
        message:
          "is too large for RE2: nested repetitions multiply their counts, and this program would be over RE2's size limit",
        received: patterns[1],
      },
      {
        field: "policy_data.dlp.sensitive_data_patterns.2",
        message:
          "is not RE2 syntax: negative lookahead (?!...) is not supported; patterns run on a linear-time engine",
        received: patterns[2],
      },
    ]);
    const current = await t.request("GET", `/api/v1/policies/${created.body.id}`, { token });
    expect(current.body.version).toBe(1);
  });

  test("a PUT is checked against the current document: turning sharing off needs direction none", async () => {
    const created = await t.request("POST", "/api/v1/policies", { token, body: { name: "Clipboard" } });
    const response = await t.request("PUT", `/api/v1/policies/${created.body.id}`, {
      token,
      body: { policy_data: { dlp: { clipboard_sharing: false } } },
    });
    expect(response.body.errors).toEqual([
      {
        field: "policy_data.dlp.clipboard_direction",
        message: "must be none when clipboard_sharing is false",
        received: "personal_to_work",
      },
    ]);
  });

  test("errors in customizations are named customizations.<section>.<setting>", async () => {
    const response = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: {
        template_id: "strict",
        name: "Bad customizations",
        customizations: { usb: { whitelist: ["046d"] }, storage: { max_file_size_mb: -1 }, extra: {} },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { field: "customizations.storage.max_file_size_mb", message: "must be at least 0", received: -1 },
      { field: "customizations.extra", message: "unknown field", received: {} },
      { field: "customizations.usb.whitelist.0", message: USB_ID_MESSAGE, received: "046d" },
    ]);
  });
});

describe("POST /api/v1/policies/validate", () => {
  for (const { rule, policyData, errors } of RULES) {
    test(`invalid: ${rule}`, async () => {
      const response = await t.request("POST", "/api/v1/policies/validate", {
        token,
        body: { policy_data: policyData },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 400, reason: "policy_invalid", valid: false });
      expect(response.body.errors).toEqual(withPrefix("policy_data", errors));
    });
  }

  test("a valid document answers valid true, no errors, and the complete document", async () => {
    const response = await t.request("POST", "/api/v1/policies/validate", {
      token,
      body: { policy_data: { storage: { max_file_size_mb: 7 } } },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      valid: true,
      errors: [],
      policy_data: { ...BALANCED, storage: { ...BALANCED?.storage, max_file_size_mb: 7 } },
    });
  });

  test("a missing policy_data is invalid; nothing is stored either way", async () => {
    const before = await t.request("GET", "/api/v1/policies", { token });
    const response = await t.request("POST", "/api/v1/policies/validate", { token, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      valid: false,
      errors: [{ field: "policy_data", message: "is required" }],
    });
    const after = await t.request("GET", "/api/v1/policies", { token });
    expect(after.body.total).toBe(before.body.total);
  });
});

describe("the OpenAPI document", () => {
  test("describes policy_data fully: nested sections, enums, patterns and limits", async () => {
    const document = (await t.request("GET", "/api/v1/openapi.json")).body;
    const input = document.components.schemas.PolicyDataInput;
    expect(input.additionalProperties).toBe(false);
    expect(Object.keys(input.properties)).toEqual(["dlp", "network", "usb", "storage", "wipe"]);
    expect(input.properties.wipe.properties.work_paths).toMatchObject({ type: "array", maxItems: 100 });
    expect(input.properties.network.properties.blocked_domains.items.pattern).toStartWith("^(\\*\\.)?");
    const dlp = input.properties.dlp.properties;
    expect(dlp.clipboard_direction.enum).toEqual(["none", "work_to_personal", "personal_to_work", "both"]);
    expect(dlp.sensitive_data_patterns).toMatchObject({ type: "array", maxItems: 100 });
    expect(input.properties.usb.properties.whitelist.items.pattern).toBe("^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$");
    expect(input.properties.usb.properties.allowed_classes.items.enum).toContain("mass_storage");
    expect(input.properties.storage.properties.max_file_size_mb).toMatchObject({
      type: "integer",
      minimum: 0,
    });

    const create = document.paths["/api/v1/policies"].post;
    const createBody = create.requestBody.content["application/json"].schema;
    expect(createBody.properties.policy_data.$ref).toBe("#/components/schemas/PolicyDataInput");
    expect(createBody.required).toEqual(["name"]);
    const fromTemplate = document.paths["/api/v1/policies/from-template"].post;
    expect(fromTemplate.requestBody.content["application/json"].schema.properties.customizations.$ref).toBe(
      "#/components/schemas/PolicyDataInput",
    );

    const policy = dereference(
      document,
      document.paths["/api/v1/policies/{id}"].get.responses["200"].content["application/json"].schema,
    );
    expect(policy.properties.policy_data.required).toEqual(["dlp", "network", "usb", "storage"]);
    expect(policy.properties.policy_data.properties.network.properties.allowed_domains.items.type).toBe(
      "string",
    );
    expect(policy.properties.created_at.format).toBe("date-time");
    expect(policy.properties.id.format).toBe("uuid");
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "409"]),
    );
    const invalid = dereference(
      document,
      document.paths["/api/v1/policies/validate"].post.responses["400"].content["application/json"],
    );
    expect(Object.keys(invalid.schema.properties)).toEqual(expect.arrayContaining(["valid", "errors"]));
  });
});
