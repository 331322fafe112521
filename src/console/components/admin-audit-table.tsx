import { Fragment } from "preact";
import { useState } from "preact/hooks";
import type { Schemas } from "../api/client";
import { formatDateTime, humanize } from "../lib/format";
import { Link } from "../lib/router";
import { setAuditFilter } from "./admin-audit-filters";
import { StatusBadge } from "./status";

type Entry = Schemas["AuditLogEntry"];

// An audit trail is read to the second: date and time on two lines that never break inside.
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });

function keepTogether(text: string): string {
  return text.replace(/ /g, "\u00a0");
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return `${dateOnly.format(date)} ${timeOnly.format(date)}`;
}

const ACTOR_TYPES: Record<string, string> = {
  user: "User",
  api_key: "API key",
  device: "Device",
  system: "System",
  anonymous: "Anonymous",
};

/** Where a target of each type is shown in the console, if anywhere. */
const TARGET_PAGES: Record<string, string> = {
  device: "/devices/",
  policy: "/policies/",
  webhook: "/webhooks/",
};

/** A target: its kind, and a link to it (or the user's name) when the console can show it. */
function Target({ target, names }: { target: Entry["target"]; names: Map<string, string> }) {
  if (!target.type) return <span class="muted">—</span>;
  const kind = humanize(target.type);
  if (!target.id) return <>{kind}</>;
  const page = TARGET_PAGES[target.type];
  const name = names.get(target.id);
  if (page)
    return (
      <>
        {kind} <Link href={`${page}${target.id}`}>{name ?? target.id.slice(0, 8)}</Link>
      </>
    );
  return (
    <>
      {kind} {name ?? <code title={target.id}>{target.id.slice(0, 8)}</code>}
    </>
  );
}

/** A value of an entry's details in words: yes/no, dates, lists, nested objects as JSON. */
function DetailValue({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">—</span>;
  if (typeof value === "boolean") return <>{value ? "Yes" : "No"}</>;
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(value))
    return <>{formatDateTime(value)}</>;
  if (Array.isArray(value) && value.every((item) => typeof item !== "object"))
    return <>{value.length === 0 ? <span class="muted">none</span> : value.join(", ")}</>;
  if (typeof value === "object") return <pre class="small">{JSON.stringify(value, null, 2)}</pre>;
  return <>{String(value)}</>;
}

function hasDetails(entry: Entry): boolean {
  return entry.details !== null && Object.keys(entry.details).length > 0;
}

/** The expanded part of a row: what the entry recorded, and the full ids that the row shortens. */
function EntryDetails({ entry }: { entry: Entry }) {
  return (
    <div class="stack small-gap">
      <dl class="details small">
        {Object.entries(entry.details ?? {}).map(([key, value]) => (
          <Fragment key={key}>
            <dt>{humanize(key)}</dt>
            <dd>
              <DetailValue value={value} />
            </dd>
          </Fragment>
        ))}
        {entry.actor.id ? (
          <>
            <dt>Actor ID</dt>
            <dd>
              <code>{entry.actor.id}</code>
            </dd>
          </>
        ) : null}
        {entry.target.id ? (
          <>
            <dt>Target ID</dt>
            <dd>
              <code>{entry.target.id}</code>
            </dd>
          </>
        ) : null}
        <dt>Entry ID</dt>
        <dd>
          <code>{entry.id}</code>
        </dd>
      </dl>
      {entry.actor.id ? (
        <button
          type="button"
          class="button-link"
          onClick={() => setAuditFilter({ actor_id: entry.actor.id ?? undefined })}
        >
          Show only entries by {entry.actor.label ?? "this actor"}
        </button>
      ) : null}
    </div>
  );
}

/** The log, newest first; a row with details opens below itself (a disclosure button, aria-expanded). */
export function AuditTable({
  rows,
  caption,
  names,
  isLoading,
}: {
  rows: Entry[];
  caption: string;
  /** Users' names by id, to name targets. */
  names: Map<string, string>;
  isLoading: boolean;
}) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setOpen(next);
  };
  return (
    <div class="table-wrap" aria-busy={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
            <th scope="col">IP address</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((entry) => {
            const isOpen = open.has(entry.id);
            const detailsId = `audit-details-${entry.id}`;
            return (
              <Fragment key={entry.id}>
                <tr>
                  <td>
                    <time dateTime={entry.timestamp}>
                      {keepTogether(dateOnly.format(new Date(entry.timestamp)))}
                      <br />
                      {keepTogether(timeOnly.format(new Date(entry.timestamp)))}
                    </time>
                  </td>
                  <td>
                    {entry.actor.label ?? <span class="muted">{ACTOR_TYPES[entry.actor.type]}</span>}
                    {entry.actor.type !== "user" && entry.actor.label ? (
                      <span class="muted small"> ({ACTOR_TYPES[entry.actor.type] ?? entry.actor.type})</span>
                    ) : null}
                  </td>
                  <td>
                    <code>{entry.action}</code>
                  </td>
                  <td>
                    <Target target={entry.target} names={names} />
                  </td>
                  <td>
                    <StatusBadge value={entry.outcome} />
                  </td>
                  <td>{entry.ip ?? <span class="muted">—</span>}</td>
                  <td>
                    {hasDetails(entry) ? (
                      <button
                        type="button"
                        class="button-link"
                        aria-expanded={isOpen}
                        aria-controls={isOpen ? detailsId : undefined}
                        aria-label={`${isOpen ? "Hide" : "Show"} details of ${entry.action} at ${formatTime(entry.timestamp)}`}
                        onClick={() => toggle(entry.id)}
                      >
                        {isOpen ? "Hide" : "Show"}
                      </button>
                    ) : (
                      <span class="muted">None</span>
                    )}
                  </td>
                </tr>
                {isOpen ? (
                  <tr id={detailsId}>
                    <td colSpan={7}>
                      <EntryDetails entry={entry} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
