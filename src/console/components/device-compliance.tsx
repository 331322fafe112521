import type { Schemas } from "../api/client";
import { RelativeTime } from "./relative-time";
import { StatusBadge } from "./status";

type Report = Schemas["ComplianceReport"];

/** A rule's required or actual value: booleans in words, versions (">= 12") as they are. */
function valueText(value: string | boolean): string {
  if (value === true) return "Yes";
  if (value === false) return "No";
  return value;
}

/** Rule paths ("storage.encryption_required") in words, the path kept for those who search the policy. */
const RULE_LABELS: Record<string, string> = {
  os_version: "Operating system version",
  "storage.encryption_required": "Disk encrypted",
  "network.vpn_required": "VPN connected",
  "usb.allowed": "USB storage allowed",
  "dlp.screenshot_allowed": "Screenshots allowed",
};

function RuleName({ rule }: { rule: string }) {
  const label = RULE_LABELS[rule];
  return label ? (
    <>
      {label} <code class="muted small">{rule}</code>
    </>
  ) : (
    <code>{rule}</code>
  );
}

/**
 * Whether the device meets its policy: the verdict, the broken rules by severity, what went unreported.
 * A phone without an agent (`isVpnProfileOnly`) is never checked: nothing on it reports.
 */
export function DeviceCompliance({
  report,
  isVpnProfileOnly,
}: {
  report: Report;
  isVpnProfileOnly: boolean;
}) {
  return (
    <section class="card" aria-labelledby="compliance-title">
      <h2 id="compliance-title">Compliance</h2>
      <p>
        <StatusBadge value={report.status} />{" "}
        <span class="muted">
          {isVpnProfileOnly && !report.last_check ? (
            "nothing on this phone reports back"
          ) : report.last_check ? (
            <>
              checked <RelativeTime value={report.last_check} />
            </>
          ) : (
            "not checked yet: the agent has not reported its facts"
          )}
        </span>
      </p>
      {report.violations.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users must reach a region that scrolls sideways on a phone (WCAG 2.1.1); it holds no link
        <section class="table-wrap" tabIndex={0} aria-label="Violations">
          <table class="table-stack">
            <caption class="visually-hidden">
              Policy rules the device does not meet, most severe first
            </caption>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Required</th>
                <th scope="col">Actual</th>
                <th scope="col">Severity</th>
              </tr>
            </thead>
            <tbody>
              {report.violations.map((violation) => (
                <tr key={violation.rule}>
                  <td>
                    <RuleName rule={violation.rule} />
                  </td>
                  <td data-label="Required">{valueText(violation.required)}</td>
                  <td data-label="Actual">{valueText(violation.actual)}</td>
                  <td data-label="Severity">
                    <StatusBadge value={violation.severity} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : report.status === "compliant" ? (
        <p>Every rule of the policy was checked and holds.</p>
      ) : null}
      {report.missing.length > 0 ? (
        <div class="notice notice-warn">
          <p>
            <strong>Not reported by the agent</strong>, so these rules could not be checked:
          </p>
          <ul>
            {report.missing.map((rule) => (
              <li key={rule}>
                <RuleName rule={rule} />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
