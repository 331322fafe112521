import { api, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { platformLabel } from "../components/device-labels";
import { EmptyState, ErrorNotice, Loading } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { StatusBadge } from "../components/status";
import { TableWrap } from "../components/table-wrap";
import { formatDateTime, formatNumber, formatRelative, humanize } from "../lib/format";
import { Link } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

const STATUSES = ["online", "offline", "suspended", "pending", "wiped"] as const;
const COMPLIANCE = ["compliant", "non_compliant", "unknown"] as const;

/** One count, a link to the devices it counts. */
function Stat({ label, value, href, badge }: { label: string; value: number; href: string; badge: string }) {
  return (
    <Link href={href} class="stat stat-link">
      <span class="stat-label">
        <StatusBadge value={badge} label={label} />
      </span>
      <span class="stat-value">{formatNumber(value)}</span>
      <span class="visually-hidden"> devices</span>
    </Link>
  );
}

/**
 * What needs attention now: devices by status and compliance, the non-compliant ones, recent events.
 * Compliance counts and lists managed devices only: a wiped device shows under Wiped, not as a problem.
 */
export function DashboardPage(_: PageProps) {
  const session = useStore(sessionStore);
  const summary = useApi(() => unwrap(api.GET("/api/v1/devices/summary")), []);
  const nonCompliant = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/devices", { params: { query: { compliance: "non_compliant", page_size: 5 } } }),
      ),
    [],
  );
  const mayReadAudit = can(session, "audit:read");
  const events = useApi(
    () =>
      mayReadAudit
        ? unwrap(api.GET("/api/v1/audit-logs", { params: { query: { page_size: 10 } } }))
        : Promise.resolve(undefined),
    [mayReadAudit],
  );
  const counts = summary.data;

  return (
    <>
      <PageHeader
        title="Dashboard"
        description="Your fleet at a glance. Each number opens the devices it counts."
      />
      <ErrorNotice error={summary.error} />
      {counts ? (
        <>
          <section aria-labelledby="by-status">
            <h2 id="by-status">
              Devices by status <span class="muted small">({formatNumber(counts.total)} in all)</span>
            </h2>
            <div class="grid stats">
              {STATUSES.map((status) => (
                <Stat
                  key={status}
                  label={humanize(status)}
                  value={counts.by_status[status]}
                  href={`/devices?status=${status}`}
                  badge={status}
                />
              ))}
            </div>
          </section>
          <section aria-labelledby="by-compliance">
            <h2 id="by-compliance">
              Devices by compliance{" "}
              <span class="muted small">
                ({formatNumber(counts.total - counts.by_status.wiped)} managed
                {counts.by_status.wiped > 0 ? "; wiped devices are not counted" : ""})
              </span>
            </h2>
            <div class="grid stats">
              {COMPLIANCE.map((compliance) => (
                <Stat
                  key={compliance}
                  label={humanize(compliance)}
                  value={counts.by_compliance[compliance]}
                  href={`/devices?compliance=${compliance}`}
                  badge={compliance}
                />
              ))}
            </div>
          </section>
          {counts.total === 0 && can(session, "devices:write") ? (
            <EmptyState title="No devices yet">
              <p>
                Create an <Link href="/enrollment-tokens">enrollment token</Link> and run the enroll command
                it shows on a laptop or phone.
              </p>
            </EmptyState>
          ) : null}
        </>
      ) : summary.isLoading ? (
        <Loading label="Counting devices" />
      ) : null}

      <section aria-labelledby="attention" class="card">
        <h2 id="attention">Non-compliant devices</h2>
        <ErrorNotice error={nonCompliant.error} />
        {nonCompliant.data && nonCompliant.data.data.length === 0 ? (
          <p class="muted">Every device that reported is compliant.</p>
        ) : null}
        {nonCompliant.data && nonCompliant.data.data.length > 0 ? (
          <>
            <ul class="plain-list">
              {nonCompliant.data.data.map((device) => (
                <li key={device.id}>
                  <Link href={`/devices/${device.id}`}>{device.device_name}</Link>{" "}
                  <span class="muted small">
                    {platformLabel(device.platform)} · last seen {formatRelative(device.last_seen)}
                  </span>
                </li>
              ))}
            </ul>
            {nonCompliant.data.total > nonCompliant.data.data.length ? (
              <Link href="/devices?compliance=non_compliant">
                All {formatNumber(nonCompliant.data.total)} non-compliant devices
              </Link>
            ) : null}
          </>
        ) : null}
      </section>

      {mayReadAudit ? (
        <section aria-labelledby="recent" class="card">
          <h2 id="recent">Recent events</h2>
          <ErrorNotice error={events.error} />
          {events.data ? (
            events.data.data.length === 0 ? (
              <p class="muted">Nothing has happened yet.</p>
            ) : (
              <TableWrap label="The ten latest audit log entries">
                <table>
                  <caption class="visually-hidden">The ten latest audit log entries</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                      <th scope="col">Outcome</th>
                    </tr>
                  </thead>
                  <tbody>
                    {events.data.data.map((entry) => (
                      <tr key={entry.id}>
                        <td title={formatDateTime(entry.timestamp)}>{formatRelative(entry.timestamp)}</td>
                        <td>{entry.actor.label ?? humanize(entry.actor.type)}</td>
                        <td>
                          <code>{entry.action}</code>
                        </td>
                        <td>
                          <StatusBadge value={entry.outcome} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          ) : null}
          <Link href="/audit">The full audit log</Link>
        </section>
      ) : null}
    </>
  );
}
