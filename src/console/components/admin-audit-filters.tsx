import { useEffect, useId, useState } from "preact/hooks";
import { setQuery } from "../lib/router";
import { Field } from "./form";

/** The audit log's filters and page, as the URL's query string holds them (since/until as ISO instants). */
export interface AuditFilters {
  action: string | undefined;
  actorId: string | undefined;
  outcome: "success" | "failure" | undefined;
  since: string | undefined;
  until: string | undefined;
  page: number;
}

export interface ActorChoice {
  id: string;
  label: string;
}

/** Actions Bulwark records, offered as suggestions; the filter takes any name (exact match). */
const KNOWN_ACTIONS = [
  "auth.login",
  "auth.logout",
  "auth.mfa_challenge",
  "auth.mfa_verify",
  "auth.sso_login",
  "auth.refresh_token_reused",
  "user.create",
  "user.update",
  "user.delete",
  "user.password_change",
  "user.lockout_clear",
  "user.sso_link",
  "mfa.totp_enrol",
  "mfa.totp_confirm",
  "mfa.webauthn_register",
  "mfa.method_delete",
  "mfa.recovery_codes_regenerate",
  "mfa.reset",
  "api_key.create",
  "api_key.revoke",
  "organization.update",
  "organization.set_plan",
  "device.enroll",
  "device.suspend",
  "device.unsuspend",
  "device.wipe",
  "device.wipe_complete",
  "device.wipe_fail",
  "device.wipe_timeout",
  "device.delete",
  "device.assign_policy",
  "device.bulk",
  "device.certificate_renew",
  "enrollment_token.create",
  "enrollment_token.revoke",
  "policy.create",
  "policy.update",
  "policy.delete",
  "policy.set_default",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.disable",
  "webhook.test",
  "vpn.server_config_export",
  "gdpr.request_resolve",
];

function isInstant(value: string | null): value is string {
  return value !== null && value !== "" && !Number.isNaN(new Date(value).getTime());
}

/** The filters in the URL; values a hand-edited URL got wrong are dropped rather than sent. */
export function readAuditFilters(query: URLSearchParams): AuditFilters {
  const page = Number(query.get("page"));
  const outcome = query.get("outcome");
  const since = query.get("since");
  const until = query.get("until");
  return {
    action: query.get("action")?.trim() || undefined,
    actorId: query.get("actor_id")?.trim() || undefined,
    outcome: outcome === "success" || outcome === "failure" ? outcome : undefined,
    since: isInstant(since) ? new Date(since).toISOString() : undefined,
    until: isInstant(until) ? new Date(until).toISOString() : undefined,
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

export function hasAuditFilters(filters: AuditFilters): boolean {
  return Boolean(filters.action || filters.actorId || filters.outcome || filters.since || filters.until);
}

/** A filter changed: back to the first page, since the old page number may no longer exist. */
export function setAuditFilter(values: Record<string, string | undefined>): void {
  setQuery({ ...values, page: undefined });
}

/** An instant as a datetime-local input shows it: the browser's local time, to the minute. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * A datetime-local value (local time, to the minute) as an ISO instant. "Until 10:00" includes the whole
 * minute 10:00, as a reader of the log expects.
 */
function fromLocalInput(value: string, isEndOfMinute: boolean): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  return new Date(date.getTime() + (isEndOfMinute ? 59_999 : 0)).toISOString();
}

/** How long typing pauses before the log is filtered: one request per word, not per key. */
const TYPING_DELAY_MS = 400;

/** Action (with suggestions), actor, outcome and a time range; every choice is kept in the URL. */
export function AuditFilterBar({
  filters,
  actors,
}: {
  filters: AuditFilters;
  /** The organization's users, when the caller may list them and they fit one page; else the actor is an id. */
  actors: ActorChoice[] | undefined;
}) {
  const actionsId = useId();
  const [action, setAction] = useState(filters.action ?? "");
  const [since, setSince] = useState(toLocalInput(filters.since));
  const [until, setUntil] = useState(toLocalInput(filters.until));
  // The URL changed by other means (Back, "Clear filters"): follow it.
  useEffect(() => setAction(filters.action ?? ""), [filters.action]);
  useEffect(() => setSince(toLocalInput(filters.since)), [filters.since]);
  useEffect(() => setUntil(toLocalInput(filters.until)), [filters.until]);
  useEffect(() => {
    const wanted = action.trim() || undefined;
    if (wanted === filters.action) return;
    const timer = setTimeout(() => setAuditFilter({ action: wanted }), TYPING_DELAY_MS);
    return () => clearTimeout(timer);
  }, [action, filters.action]);

  const sinceIso = fromLocalInput(since, false);
  const untilIso = fromLocalInput(until, true);
  const rangeError = sinceIso && untilIso && untilIso < sinceIso ? "must be later than “From”" : undefined;
  const applyRange = (nextSince: string, nextUntil: string) => {
    const from = fromLocalInput(nextSince, false);
    const to = fromLocalInput(nextUntil, true);
    if (from && to && to < from) return;
    setAuditFilter({ since: from, until: to });
  };

  return (
    <search aria-label="Filter the audit log">
      <form
        class="filters"
        onSubmit={(event) => {
          // Enter filters at once instead of waiting for the pause.
          event.preventDefault();
          setAuditFilter({ action: action.trim() || undefined });
        }}
      >
        <Field label="Action" hint="Exact name, e.g. user.create">
          {(control) => (
            <input
              {...control}
              type="search"
              list={actionsId}
              value={action}
              maxLength={100}
              autoComplete="off"
              spellcheck={false}
              onInput={(event) => setAction(event.currentTarget.value)}
            />
          )}
        </Field>
        <datalist id={actionsId}>
          {KNOWN_ACTIONS.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <ActorFilter value={filters.actorId} actors={actors} />
        <Field label="Outcome">
          {(control) => (
            <select
              {...control}
              value={filters.outcome ?? ""}
              onChange={(event) => setAuditFilter({ outcome: event.currentTarget.value || undefined })}
            >
              <option value="">Any outcome</option>
              <option value="success">Success</option>
              <option value="failure">Failure</option>
            </select>
          )}
        </Field>
        <Field label="From" hint="Your local time">
          {(control) => (
            <input
              {...control}
              type="datetime-local"
              value={since}
              onChange={(event) => {
                setSince(event.currentTarget.value);
                applyRange(event.currentTarget.value, until);
              }}
            />
          )}
        </Field>
        <Field label="Until" hint="Your local time" error={rangeError}>
          {(control) => (
            <input
              {...control}
              type="datetime-local"
              value={until}
              onChange={(event) => {
                setUntil(event.currentTarget.value);
                applyRange(since, event.currentTarget.value);
              }}
            />
          )}
        </Field>
        {hasAuditFilters(filters) ? (
          <button
            type="button"
            class="button-secondary"
            onClick={() =>
              setAuditFilter({
                action: undefined,
                actor_id: undefined,
                outcome: undefined,
                since: undefined,
                until: undefined,
              })
            }
          >
            Clear filters
          </button>
        ) : null}
      </form>
    </search>
  );
}

/** Who acted: a choice of the organization's users, or an id (an API key's, or when users can't be listed). */
function ActorFilter({ value, actors }: { value: string | undefined; actors: ActorChoice[] | undefined }) {
  const [text, setText] = useState(value ?? "");
  useEffect(() => setText(value ?? ""), [value]);
  if (actors) {
    const isKnown = !value || actors.some((actor) => actor.id === value);
    return (
      <Field label="Actor">
        {(control) => (
          <select
            {...control}
            value={value ?? ""}
            onChange={(event) => setAuditFilter({ actor_id: event.currentTarget.value || undefined })}
          >
            <option value="">Anyone</option>
            {actors.map((actor) => (
              <option key={actor.id} value={actor.id}>
                {actor.label}
              </option>
            ))}
            {isKnown ? null : <option value={value}>Actor {value}</option>}
          </select>
        )}
      </Field>
    );
  }
  return (
    <Field label="Actor ID" hint="A user's or API key's id">
      {(control) => (
        <input
          {...control}
          value={text}
          maxLength={100}
          autoComplete="off"
          spellcheck={false}
          onInput={(event) => setText(event.currentTarget.value)}
          onChange={(event) => setAuditFilter({ actor_id: event.currentTarget.value.trim() || undefined })}
        />
      )}
    </Field>
  );
}
