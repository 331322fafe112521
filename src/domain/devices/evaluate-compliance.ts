import { type Static, Type } from "@sinclair/typebox";
import { checkOsVersion, isPlatform } from "./platform-versions.ts";

/** Violation severities, least severe first. */
export const SEVERITIES = ["low", "medium", "high", "critical"] as const;

/** How serious a compliance violation is. */
export type Severity = (typeof SEVERITIES)[number];

/** The compliance states of a device; `unknown` until it has reported facts or an OS version. */
export const COMPLIANCE_STATUSES = ["compliant", "non_compliant", "unknown"] as const;

/** The compliance state of a device. */
export type ComplianceStatus = (typeof COMPLIANCE_STATUSES)[number];

/** The security facts an agent reports at check-in; each one is optional. */
export const DeviceFactsSchema = Type.Object(
  {
    disk_encrypted: Type.Optional(Type.Boolean({ description: "The system disk is encrypted." })),
    vpn_connected: Type.Optional(Type.Boolean({ description: "The WireGuard tunnel is up." })),
    screen_lock_enabled: Type.Optional(Type.Boolean({ description: "A screen lock is configured." })),
    firewall_enabled: Type.Optional(Type.Boolean({ description: "The host firewall is on." })),
    usb_storage_blocked: Type.Optional(Type.Boolean({ description: "USB mass storage is blocked." })),
    screenshots_blocked: Type.Optional(
      Type.Boolean({ description: "Screenshots of the work profile are blocked." }),
    ),
  },
  {
    additionalProperties: false,
    description: "Security facts reported by the device agent; a fact left out is not evaluated.",
  },
);

/** The security facts an agent reports at check-in. */
export type DeviceFacts = Static<typeof DeviceFactsSchema>;

/** One broken policy rule on one device. */
export const ViolationSchema = Type.Object(
  {
    rule: Type.String({
      description: "The policy path broken, e.g. `storage.encryption_required`, or `os_version`.",
    }),
    required: Type.Union([Type.String(), Type.Boolean()], {
      description: "The value the policy requires, e.g. `true` or `>= 12`.",
    }),
    actual: Type.Union([Type.String(), Type.Boolean()], {
      description: "The value the device reported for the same rule.",
    }),
    // Literal unions written out: a union built with .map() defeats Elysia's handler typing.
    severity: Type.Union(
      [Type.Literal("low"), Type.Literal("medium"), Type.Literal("high"), Type.Literal("critical")],
      { description: "How serious the violation is: low, medium, high or critical." },
    ),
  },
  { description: "A policy rule the device does not meet." },
);

/** One broken policy rule on one device. */
export type Violation = Static<typeof ViolationSchema>;

/** The compliance report of a device, as embedded in the single-device response. */
export const ComplianceReportSchema = Type.Object(
  {
    status: Type.Union([Type.Literal("compliant"), Type.Literal("non_compliant"), Type.Literal("unknown")], {
      description: "`unknown` until the device has reported facts or an OS version.",
    }),
    last_check: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When compliance was last evaluated; null if never.",
    }),
    violations: Type.Array(ViolationSchema, {
      description: "Broken rules, most severe first, then by rule.",
    }),
  },
  { description: "Whether the device meets its assigned policy." },
);

/** The compliance report of a device. */
export type ComplianceReport = Static<typeof ComplianceReportSchema>;

/** The policy settings compliance is evaluated against. */
export interface CompliancePolicy {
  dlp: { screenshot_allowed: boolean };
  network: { vpn_required: boolean };
  usb: { allowed: boolean };
  storage: { encryption_required: boolean };
}

/** What is known about a device: its platform, last reported OS version and facts, and its policy. */
export interface ComplianceInput {
  platform: string;
  osVersion?: string | null;
  facts?: DeviceFacts | null;
  policy: CompliancePolicy;
}

/** The result of a compliance evaluation, without the time of the check. */
export interface ComplianceEvaluation {
  status: ComplianceStatus;
  violations: Violation[];
}

/**
 * Evaluates a device against its policy. `required` and `actual` are both values of the setting the rule
 * names, so a device that allows USB storage under `usb.allowed = false` reads required false, actual true.
 */
export function evaluateCompliance(input: ComplianceInput): ComplianceEvaluation {
  const { policy } = input;
  const facts = input.facts ?? {};
  const osVersion = input.osVersion?.trim() || null;
  const hasReportedFacts = Object.values(facts).some((fact) => fact !== undefined && fact !== null);
  if (osVersion === null && !hasReportedFacts) return { status: "unknown", violations: [] };

  const violations: Violation[] = [];
  // A platform outside the list has no known minimum; enrollment only admits listed platforms.
  if (osVersion !== null && isPlatform(input.platform)) {
    const check = checkOsVersion(input.platform, osVersion);
    if (!check.supported) {
      violations.push({
        rule: "os_version",
        required: check.required,
        actual: osVersion,
        severity: "critical",
      });
    }
  }
  if (policy.storage.encryption_required && facts.disk_encrypted === false) {
    violations.push({
      rule: "storage.encryption_required",
      required: true,
      actual: false,
      severity: "critical",
    });
  }
  if (policy.network.vpn_required && facts.vpn_connected === false) {
    violations.push({ rule: "network.vpn_required", required: true, actual: false, severity: "high" });
  }
  if (!policy.usb.allowed && facts.usb_storage_blocked === false) {
    violations.push({ rule: "usb.allowed", required: false, actual: true, severity: "high" });
  }
  if (!policy.dlp.screenshot_allowed && facts.screenshots_blocked === false) {
    violations.push({ rule: "dlp.screenshot_allowed", required: false, actual: true, severity: "medium" });
  }

  violations.sort(compareViolations);
  return { status: violations.length === 0 ? "compliant" : "non_compliant", violations };
}

function compareViolations(left: Violation, right: Violation): number {
  const bySeverity = SEVERITIES.indexOf(right.severity) - SEVERITIES.indexOf(left.severity);
  if (bySeverity !== 0) return bySeverity;
  return left.rule < right.rule ? -1 : left.rule > right.rule ? 1 : 0;
}
