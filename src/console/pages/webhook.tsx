import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ConfirmDialog } from "../components/dialog";
import { ErrorNotice, Loading, notify } from "../components/feedback";
import { WebhookDeliveries } from "../components/integration-deliveries";
import { DeliveryStatusBadge } from "../components/integration-labels";
import { WebhookEditForm, WebhookSecretRotation } from "../components/integration-webhook-edit";
import { describeEvents } from "../components/integration-webhook-fields";
import { PageHeader } from "../components/layout";
import { RelativeTime } from "../components/relative-time";
import { StatusBadge } from "../components/status";
import { asApiError } from "../lib/api-errors";
import { formatDateTime } from "../lib/format";
import { Link, navigate } from "../lib/router";
import { useApi } from "../lib/use-api";

type Webhook = Schemas["Webhook"];

/** "hooks.example.com" from a subscription's URL, for the page title. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** One subscription: what it receives, a test event, its deliveries, editing, secret rotation, deletion. */
export function WebhookPage({ params }: PageProps) {
  const id = params.id ?? "";
  const webhook = useApi(() => unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id } } })), [id]);
  const [deliveriesKey, setDeliveriesKey] = useState(0);

  if (!webhook.data) {
    return (
      <>
        <PageHeader title="Webhook" />
        <ErrorNotice error={webhook.error} title="The webhook could not be loaded" />
        {webhook.error?.status === 404 ? (
          <p>
            It may have been deleted. <Link href="/webhooks">All webhooks</Link>
          </p>
        ) : null}
        {webhook.isLoading ? <Loading label="Loading the webhook" /> : null}
      </>
    );
  }
  const data = webhook.data;
  return (
    <>
      <PageHeader title={`Webhook to ${hostOf(data.url)}`} description={<span class="code">{data.url}</span>}>
        <TestEventButton
          webhook={data}
          onSent={() => {
            setDeliveriesKey((key) => key + 1);
            webhook.reload();
          }}
        />
        <DeleteWebhookButton webhook={data} />
      </PageHeader>
      <p>
        <Link href="/webhooks">All webhooks</Link>
      </p>
      <ErrorNotice error={webhook.error} title="The webhook could not be reloaded" />
      <WebhookDetails webhook={data} />
      <WebhookDeliveries webhookId={id} refreshKey={deliveriesKey} />
      <WebhookEditForm webhook={data} onSaved={webhook.reload} />
      <WebhookSecretRotation webhook={data} />
    </>
  );
}

function WebhookDetails({ webhook }: { webhook: Webhook }) {
  return (
    <section aria-labelledby="details" class="card">
      <h2 id="details">Details</h2>
      <dl class="details">
        <dt>URL</dt>
        <dd class="code">{webhook.url}</dd>
        <dt>Events</dt>
        <dd>{describeEvents(webhook.events)}</dd>
        <dt>State</dt>
        <dd>
          <StatusBadge value={webhook.active ? "active" : "inactive"} />
          {webhook.disabled_reason ? <p class="muted small">Disabled: {webhook.disabled_reason}</p> : null}
        </dd>
        <dt>Last delivery</dt>
        <dd>
          {webhook.last_delivery ? (
            <>
              <DeliveryStatusBadge status={webhook.last_delivery.status} />{" "}
              {webhook.last_delivery.status_code !== null
                ? `HTTP ${webhook.last_delivery.status_code}, `
                : ""}
              <RelativeTime value={webhook.last_delivery.attempted_at} />
            </>
          ) : (
            <span class="muted">None yet</span>
          )}
        </dd>
        <dt>Created</dt>
        <dd>{formatDateTime(webhook.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatDateTime(webhook.updated_at)}</dd>
      </dl>
    </section>
  );
}

/** Queues a webhook.test event for this subscription alone; it shows up in the deliveries. */
function TestEventButton({ webhook, onSent }: { webhook: Webhook; onSent: () => void }) {
  const [isBusy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const send = async () => {
    setError(undefined);
    setBusy(true);
    try {
      await unwrap(api.POST("/api/v1/webhooks/{id}/test", { params: { path: { id: webhook.id } } }));
      notify("Test event queued: Refresh the deliveries to see how it went");
      onSent();
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" disabled={isBusy || !webhook.active} onClick={send}>
        {isBusy ? "Sending…" : "Send test event"}
      </button>
      {!webhook.active ? <span class="muted small">Turn it on to send a test event.</span> : null}
      {error ? (
        <div class="wide">
          <ErrorNotice error={error} title="The test event could not be sent" />
        </div>
      ) : null}
    </>
  );
}

function DeleteWebhookButton({ webhook }: { webhook: Webhook }) {
  const [isOpen, setOpen] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const remove = async () => {
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: webhook.id } } }));
      setOpen(false);
      notify(`Webhook to ${hostOf(webhook.url)} deleted`);
      navigate("/webhooks");
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <>
      <button type="button" class="button-danger" onClick={() => setOpen(true)}>
        Delete…
      </button>
      <ConfirmDialog
        title="Delete this webhook?"
        open={isOpen}
        confirmLabel="Delete webhook"
        isDanger
        onConfirm={remove}
        onClose={() => {
          setError(undefined);
          setOpen(false);
        }}
      >
        <p>
          Bulwark stops sending events to <span class="code">{webhook.url}</span>. Its delivery log goes with
          it, and deliveries still waiting for a retry are not sent.
        </p>
        <ErrorNotice error={error} title="The webhook could not be deleted" />
      </ConfirmDialog>
    </>
  );
}
