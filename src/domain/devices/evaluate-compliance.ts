import { type Static, Type } from "@sinclair/typebox";
import { COMPLIANCE_STATUSES, SEVERITIES } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { checkOsVersion, isPlatform, type OsMinimums, osVersionMinimum } from "./platform-versions.ts";

/** Violation severities, least severe first. */
export { SEVERITIES };

/** How serious a compliance violation is. */
export type Severity = (typeof SEVERITIES)[number];

/**
 * The compliance states of a device: `non_compliant` when a rule is broken, `unknown` when nothing was
 * reported or a rule the policy needs could not be checked, `compliant` when every needed rule held.
 */
export { COMPLIANCE_STATUSES };

/** The compliance state of a device. */
export type ComplianceStatus = (typeof COMPLIANCE_STATUSES)[number];

/** The security facts an agent reports at check-in; each one is optional. */
export const DeviceFactsSchema = Type.Object(
  {
    disk_encrypted: Type.Optional(Type.Boolean({ description: "The system disk is encrypted." })),
    vpn_connected: Type.Optional(Type.Boolean({ description: "The WireGuard tunnel is up." })),
    screen_lock_enabled: Type.Optional(Type.Boolean({ description: "A screen lock is configured." })),
    firewall_enabled: Type.Optional(Type.Boolean({ description: "The host firewall is on." })),
    usb_storage_blocked: Type.Optional(
      Type.Boolean({
        description:
          "USB mass storage is blocked (on Linux: the storage drivers cannot load, or usbguard blocks class 08). " +
          "Judges storage.external_storage_allowed = false.",
      }),
    ),
    usb_devices_blocked: Type.Optional(
      Type.Boolean({
        description:
          "USB devices other than the policy's whitelist and allowed classes are blocked (on Linux: usbguard's " +
          "daemon runs with the agent's rules loaded, as the daemon reports them). Judges usb.allowed = false.",
      }),
    ),
    screenshots_blocked: Type.Optional(
      Type.Boolean({ description: "Screenshots of the work profile are blocked." }),
    ),
  },
  {
    title: "DeviceFacts",
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
    severity: literalUnion(SEVERITIES, {
      description: "How serious the violation is: low, medium, high or critical.",
    }),
  },
  { title: "ComplianceViolation", description: "A policy rule the device does not meet." },
);

/** One broken policy rule on one device. */
export type Violation = Static<typeof ViolationSchema>;

/** The compliance status, as documented in every response that carries it. */
export const ComplianceStatusSchema = literalUnion(COMPLIANCE_STATUSES, {
  title: "ComplianceStatus",
  description:
    "non_compliant: a rule is broken; unknown: nothing reported yet, or a rule the policy needs could " +
    "not be checked (see missing); compliant: every rule the policy needs was checked and holds.",
});

/** The rules that could not be checked, as documented in every response that carries them. */
export const MissingRulesSchema = Type.Array(Type.String(), {
  description:
    "Rules the policy needs that could not be checked because the agent did not report the fact " +
    "(e.g. `storage.encryption_required` without disk_encrypted) or the OS version (`os_version`).",
});

/** The compliance report of a device, as embedded in the single-device response. */
export const ComplianceReportSchema = Type.Object(
  {
    status: ComplianceStatusSchema,
    last_check: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description:
        "When compliance was last evaluated from reported facts or an OS version (at a check-in, an " +
        "assignment, or after its policy changed); null while the device has reported neither.",
    }),
    violations: Type.Array(ViolationSchema, {
      description: "Broken rules, most severe first, then by rule.",
    }),
    missing: MissingRulesSchema,
  },
  { title: "ComplianceReport", description: "Whether the device meets its assigned policy." },
);

/** The compliance report of a device. */
export type ComplianceReport = Static<typeof ComplianceReportSchema>;

/** The policy settings compliance is evaluated against. */
export interface CompliancePolicy {
  dlp: { screenshot_allowed: boolean };
  network: { vpn_required: boolean };
  usb: { allowed: boolean; audit_only: boolean };
  storage: { encryption_required: boolean; external_storage_allowed: boolean };
}

/** What is known about a device: its platform, last reported OS version and facts, and its policy. */
export interface ComplianceInput {
  platform: string;
  osVersion?: string | null;
  facts?: DeviceFacts | null;
  policy: CompliancePolicy;
  /** devices.min_os_versions: minimums per platform or Linux distribution, over the built-in ones. */
  minimums?: OsMinimums;
}

/** The result of a compliance evaluation, without the time of the check. */
export interface ComplianceEvaluation {
  status: ComplianceStatus;
  violations: Violation[];
  /** Rules the policy needs that could not be checked, most severe first, then by rule. */
  missing: string[];
}

/** Whether the device has reported anything to judge: an OS version or at least one fact. */
export function hasReportedState(input: Pick<ComplianceInput, "osVersion" | "facts">): boolean {
  const hasOsVersion = Boolean(input.osVersion?.trim());
  return hasOsVersion || Object.values(input.facts ?? {}).some((fact) => fact !== undefined && fact !== null);
}

/**
 * Evaluates a device against its policy. Any violation makes it non_compliant. Otherwise it is unknown
 * when it has reported nothing, or when a rule the policy needs could not be checked (the fact or the OS
 * version is missing; listed in `missing`), and compliant only when every needed rule was checked.
 * `required` and `actual` are both values of the setting the rule names, so a device that allows USB
 * storage under `usb.allowed = false` reads required false, actual true.
 */
export function evaluateCompliance(input: ComplianceInput): ComplianceEvaluation {
  const { policy } = input;
  const facts = input.facts ?? {};
  const osVersion = input.osVersion?.trim() || null;
  const violations: Violation[] = [];
  const missing: string[] = [];

  // A platform outside the list has no known minimum; enrollment only admits listed platforms. A Linux
  // device's minimum is its distribution's, named by its os_version: without one, none applies.
  if (isPlatform(input.platform) && osVersionMinimum(input.platform, osVersion, input.minimums) !== null) {
    if (osVersion === null) missing.push("os_version");
    else {
      const check = checkOsVersion(input.platform, osVersion, input.minimums);
      if (!check.supported) {
        violations.push({
          rule: "os_version",
          required: check.required,
          actual: osVersion,
          severity: "critical",
        });
      }
    }
  }
  const checks: {
    isNeeded: boolean;
    fact: boolean | undefined | null;
    isMet: (fact: boolean) => boolean;
    violation: Violation;
  }[] = [
    {
      isNeeded: policy.storage.encryption_required,
      fact: facts.disk_encrypted,
      isMet: (encrypted) => encrypted,
      violation: { rule: "storage.encryption_required", required: true, actual: false, severity: "critical" },
    },
    {
      isNeeded: policy.network.vpn_required,
      fact: facts.vpn_connected,
      isMet: (connected) => connected,
      violation: { rule: "network.vpn_required", required: true, actual: false, severity: "high" },
    },
    {
      // audit_only: USB use is logged, not blocked, so nothing is required to block it.
      isNeeded: !policy.usb.allowed && !policy.usb.audit_only,
      fact: facts.usb_devices_blocked,
      isMet: (blocked) => blocked,
      violation: { rule: "usb.allowed", required: false, actual: true, severity: "high" },
    },
    {
      isNeeded: !policy.storage.external_storage_allowed,
      fact: facts.usb_storage_blocked,
      isMet: (blocked) => blocked,
      violation: {
        rule: "storage.external_storage_allowed",
        required: false,
        actual: true,
        severity: "high",
      },
    },
    {
      isNeeded: !policy.dlp.screenshot_allowed,
      fact: facts.screenshots_blocked,
      isMet: (blocked) => blocked,
      violation: { rule: "dlp.screenshot_allowed", required: false, actual: true, severity: "medium" },
    },
  ];
  for (const check of checks) {
    if (!check.isNeeded) continue;
    if (check.fact === undefined || check.fact === null) missing.push(check.violation.rule);
    else if (!check.isMet(check.fact)) violations.push(check.violation);
  }

  violations.sort(compareViolations);
  const status: ComplianceStatus =
    violations.length > 0
      ? "non_compliant"
      : missing.length > 0 || !hasReportedState({ osVersion, facts })
        ? "unknown"
        : "compliant";
  return { status, violations, missing };
}

function compareViolations(left: Violation, right: Violation): number {
  const bySeverity = SEVERITIES.indexOf(right.severity) - SEVERITIES.indexOf(left.severity);
  if (bySeverity !== 0) return bySeverity;
  return left.rule < right.rule ? -1 : left.rule > right.rule ? 1 : 0;
}
