import { Fragment } from "preact";
import { api, unwrap } from "../api/client";
import { formatDateTime, humanize } from "../lib/format";
import { Link, setQuery } from "../lib/router";
import { useApi } from "../lib/use-api";
import { oneOf } from "./device-labels";
import { EmptyState, ErrorNotice, Loading } from "./feedback";
import { Field } from "./form";
import { Pagination } from "./pagination";
import { RelativeTime } from "./relative-time";
import { StatusBadge } from "./status";

const LOG_PAGE_SIZE = 20;

/** The events a device's log holds (GET /devices/:id/logs), in the words the filter shows. */
const EVENT_LABELS = {
  "device.enrolled": "Enrolled",
  "device.checkin": "Checked in",
  "policy.applied": "Policy applied",
  "policy.assigned": "Policy assigned",
  "device.compliance_changed": "Compliance changed",
  "device.suspended": "Suspended",
  "device.unsuspended": "Unsuspended",
  "device.offline": "Went offline",
  "certificate.renewed": "Certificate renewed",
  "device.vpn_readdressed": "VPN address changed",
  "wipe.requested": "Wipe requested",
  "wipe.completed": "Wipe completed",
  "wipe.failed": "Wipe failed",
  "wipe.timed_out": "Wipe timed out",
} as const;
type LogEvent = keyof typeof EVENT_LABELS;
const EVENTS = Object.keys(EVENT_LABELS) as LogEvent[];

function eventLabel(event: string): string {
  return EVENT_LABELS[event as LogEvent] ?? humanize(event);
}

/** Detail keys whose humanized form would read wrong ("Os version", "Vpn ip"). */
const KEY_LABELS: Record<string, string> = {
  os_version: "OS version",
  vpn_ip: "VPN IP",
  vpn_connected: "VPN connected",
  usb_storage_blocked: "USB storage blocked",
  usb_devices_blocked: "USB devices blocked",
  hardware_id: "Hardware ID",
  policy_id: "Policy",
  previous_policy_id: "Previous policy",
  wipe_id: "Wipe ID",
  user_id: "User ID",
  enrollment_token_id: "Enrollment token ID",
};

/** Detail keys whose values are states, shown as the badges the rest of the console uses. */
const BADGE_KEYS = new Set(["status", "previous_status", "severity", "compliance_status"]);

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** One value of an entry's details, in words: yes/no, dates, policy links, nested facts on one line. */
function DetailValue({ name, value }: { name: string; value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">—</span>;
  if (typeof value === "boolean") return <>{value ? "Yes" : "No"}</>;
  if (typeof value === "string" && name.endsWith("policy_id"))
    return <Link href={`/policies/${value}`}>{value}</Link>;
  if (typeof value === "string" && BADGE_KEYS.has(name)) return <StatusBadge value={value} />;
  if (typeof value === "string" && ISO_INSTANT.test(value)) return <>{formatDateTime(value)}</>;
  if (typeof value !== "object") return <>{String(value)}</>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>;
    // One line per item (violations); not a list, whose items the activity list's styles would also draw.
    return (
      <>
        {value.map((item, index) => (
          <div key={index}>
            <DetailValue name={name} value={item} />
          </div>
        ))}
      </>
    );
  }
  return (
    <>
      {Object.entries(value).map(([key, item], index) => (
        <span key={key}>
          {index > 0 ? ", " : ""}
          {KEY_LABELS[key] ?? humanize(key)}: <DetailValue name={key} value={item} />
        </span>
      ))}
    </>
  );
}

function Details({ details }: { details: Record<string, unknown> }) {
  const entries = Object.entries(details);
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <dl class="details small">
      {entries.map(([key, value]) => (
        <Fragment key={key}>
          <dt>{KEY_LABELS[key] ?? humanize(key)}</dt>
          <dd>
            <DetailValue name={key} value={value} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

/**
 * The device's activity log, newest first, a page at a time, filtered by event; the filter and page live
 * in the URL (log_event, log_page) like the device list's.
 */
export function DeviceActivity({
  deviceId,
  query,
  version,
}: {
  deviceId: string;
  query: URLSearchParams;
  version: number;
}) {
  const event = oneOf(EVENTS, query.get("log_event"));
  const requestedPage = Number(query.get("log_page"));
  const page = Number.isInteger(requestedPage) && requestedPage >= 1 ? requestedPage : 1;
  const logs = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/devices/{id}/logs", {
          params: { path: { id: deviceId }, query: { page, page_size: LOG_PAGE_SIZE, event } },
        }),
      ),
    [deviceId, page, event, version],
  );
  return (
    <section class="card" aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      <div class="filters">
        <Field label="Event">
          {(control) => (
            <select
              {...control}
              value={event ?? ""}
              onChange={(change) => setQuery({ log_event: change.currentTarget.value, log_page: undefined })}
            >
              <option value="">All events</option>
              {EVENTS.map((item) => (
                <option key={item} value={item}>
                  {EVENT_LABELS[item]}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNotice error={logs.error} title="The activity log could not be loaded" />
      {logs.data ? (
        logs.data.total === 0 ? (
          <EmptyState title={event ? `No “${EVENT_LABELS[event]}” entries` : "No activity yet"}>
            <p>Check-ins, policy changes, suspensions and wipes are listed here as they happen.</p>
          </EmptyState>
        ) : (
          <>
            {/* A list rather than a table: each entry's details need the width a phone does not have. */}
            <ol class="plain-list" aria-label="Activity, newest first" aria-busy={logs.isLoading}>
              {logs.data.data.map((entry, index) => (
                <li key={`${entry.timestamp}-${index}`}>
                  <p>
                    <strong>{eventLabel(entry.event)}</strong> <code class="muted small">{entry.event}</code>{" "}
                    <span class="muted">
                      · <RelativeTime value={entry.timestamp} />
                    </span>
                  </p>
                  <Details details={entry.details} />
                </li>
              ))}
            </ol>
            <Pagination
              page={page}
              pageSize={LOG_PAGE_SIZE}
              total={logs.data.total}
              label="Activity pages"
              onPage={(next) => setQuery({ log_page: next === 1 ? undefined : next })}
            />
          </>
        )
      ) : logs.isLoading ? (
        <Loading label="Loading the activity" />
      ) : null}
    </section>
  );
}
