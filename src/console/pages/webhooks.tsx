import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { CopyField } from "../components/copy";
import { EmptyState, ErrorNotice, notify } from "../components/feedback";
import { Field } from "../components/form";
import { DeliveryStatusBadge } from "../components/integration-labels";
import {
  ALL_EVENTS,
  describeEvents,
  EventsFieldset,
  SecretField,
} from "../components/integration-webhook-fields";
import { PageHeader } from "../components/layout";
import { PagedList } from "../components/pagination";
import { RelativeTime } from "../components/relative-time";
import { StatusBadge } from "../components/status";
import { TableWrap } from "../components/table-wrap";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { Link, setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type Webhook = Schemas["Webhook"];

const PAGE_SIZE = 20;
const FIELDS = ["url", "events", "secret"];

function pageOf(query: URLSearchParams): number {
  const page = Number(query.get("page"));
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** The organization's webhook subscriptions: add one (its secret shown once), open one to test and edit it. */
export function WebhooksPage(_: PageProps) {
  const isAdmin = can(useStore(sessionStore), "admin");
  const page = pageOf(useLocation().query);
  const list = useApi(
    () => unwrap(api.GET("/api/v1/webhooks", { params: { query: { page, page_size: PAGE_SIZE } } })),
    [page],
  );
  const [created, setCreated] = useState<{ webhook: Webhook; secret: string } | null>(null);
  // null until the user opens or closes the form: then the first subscription is what an empty page is
  // for, so its form shows without a click.
  const [isAdding, setAdding] = useState<boolean | null>(null);
  const isFormOpen = isAdmin && (isAdding ?? list.data?.total === 0);

  const onCreated = (webhook: Webhook, secret: string) => {
    setAdding(false);
    setCreated({ webhook, secret });
    notify("Webhook added");
    if (page === 1) list.reload();
    else setQuery({ page: undefined });
  };

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Bulwark sends each event as a signed POST to these URLs, retrying until the receiver answers with a 2xx."
      >
        {isAdmin && !created ? (
          <button
            type="button"
            class={isFormOpen ? "button-secondary" : ""}
            aria-expanded={isFormOpen}
            aria-controls="webhook-form"
            onClick={() => setAdding(!isFormOpen)}
          >
            {isFormOpen ? "Close the form" : "Add a webhook"}
          </button>
        ) : null}
      </PageHeader>
      {created ? (
        <div class="card">
          <WebhookCreated webhook={created.webhook} secret={created.secret} onDone={() => setCreated(null)} />
        </div>
      ) : null}
      <div id="webhook-form">
        {isFormOpen && !created ? (
          <div class="card">
            <WebhookCreateForm onCreated={onCreated} />
          </div>
        ) : null}
      </div>
      <h2>Subscriptions</h2>
      <ErrorNotice error={list.error} title="The webhooks could not be loaded" />
      <PagedList
        list={list}
        page={page}
        pageSize={PAGE_SIZE}
        caption="Webhooks"
        pagesLabel="Webhook pages"
        loadingLabel="Loading webhooks"
        empty={
          <EmptyState title="No webhooks yet">
            <p>
              {isAdmin
                ? "Add the URL of a service that should hear about device and policy changes, then send it a test event."
                : "An administrator can add webhooks."}
            </p>
          </EmptyState>
        }
      >
        {(rows, tableCaption) => (
          <WebhookTable rows={rows} caption={tableCaption} isLoading={list.isLoading} />
        )}
      </PagedList>
    </>
  );
}

function WebhookTable({
  rows,
  caption,
  isLoading,
}: {
  rows: Webhook[];
  caption: string;
  isLoading: boolean;
}) {
  return (
    <TableWrap label={caption} isLoading={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Last delivery</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((webhook) => (
            <tr key={webhook.id}>
              <td>
                <Link href={`/webhooks/${webhook.id}`} class="code">
                  {webhook.url}
                </Link>
              </td>
              <td>{describeEvents(webhook.events)}</td>
              <td>
                <StatusBadge value={webhook.active ? "active" : "inactive"} />
                {webhook.disabled_reason ? <p class="muted small">{webhook.disabled_reason}</p> : null}
              </td>
              <td>
                {webhook.last_delivery ? (
                  <>
                    <DeliveryStatusBadge status={webhook.last_delivery.status} />{" "}
                    {webhook.last_delivery.status_code !== null ? (
                      <span class="code">HTTP {webhook.last_delivery.status_code}</span>
                    ) : null}
                    <br />
                    <span class="small">
                      <RelativeTime value={webhook.last_delivery.attempted_at} />
                    </span>
                  </>
                ) : (
                  <span class="muted">None yet</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function WebhookCreateForm({ onCreated }: { onCreated: (webhook: Webhook, secret: string) => void }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const webhook = await unwrap(
        api.POST("/api/v1/webhooks", { body: { url: url.trim(), events, secret } }),
      );
      onCreated(webhook, secret);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} aria-labelledby="new-webhook">
      <h2 id="new-webhook">Add a webhook</h2>
      <ErrorNotice error={formError(error, FIELDS)} title="The webhook could not be added" />
      <Field label="URL" hint="The http(s) address that receives the POSTs." error={fieldError(error, "url")}>
        {(control) => (
          <input
            {...control}
            type="url"
            class="wide"
            required
            placeholder="https://example.com/hooks/bulwark"
            value={url}
            onInput={(event) => setUrl(event.currentTarget.value)}
          />
        )}
      </Field>
      <EventsFieldset value={events} error={fieldError(error, "events")} onChange={setEvents} />
      <SecretField
        label="Signing secret"
        value={secret}
        isRequired
        error={fieldError(error, "secret")}
        onChange={setSecret}
      />
      <div class="button-row">
        <button type="submit" disabled={isBusy}>
          {isBusy ? "Adding…" : "Add webhook"}
        </button>
      </div>
    </form>
  );
}

/** The new subscription, with its secret shown this once for the receiver's configuration. */
function WebhookCreated({
  webhook,
  secret,
  onDone,
}: {
  webhook: Webhook;
  secret: string;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section aria-labelledby="webhook-created">
      <h2 id="webhook-created" ref={heading} tabIndex={-1}>
        Webhook added
      </h2>
      <p>
        Bulwark now sends{" "}
        {webhook.events.includes(ALL_EVENTS) ? "every event" : describeEvents(webhook.events)} to{" "}
        <span class="code">{webhook.url}</span>.
      </p>
      <div class="notice notice-warn">
        <strong>Copy the signing secret now: it won't be shown again.</strong>
        <p>
          The receiver checks each delivery's X-Service-Signature header (HMAC-SHA256 of the body) or its
          Standard Webhooks signature with it.
        </p>
      </div>
      <CopyField label="Signing secret" value={secret} isCode />
      <div class="button-row">
        <Link href={`/webhooks/${webhook.id}`} class="button">
          Open it and send a test event
        </Link>
        <button type="button" class="button-secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
