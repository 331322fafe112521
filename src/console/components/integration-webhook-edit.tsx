import { useEffect, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { CopyField } from "./copy";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";
import { Checkbox, Field } from "./form";
import { EventsFieldset, SecretField } from "./integration-webhook-fields";

type Webhook = Schemas["Webhook"];

const EDIT_FIELDS = ["url", "events", "active"];

function sameEvents(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((name) => b.includes(name));
}

/** Changes a subscription's URL, events and active flag; only what changed is sent. */
export function WebhookEditForm({
  webhook,
  onSaved,
}: {
  webhook: Webhook;
  onSaved: (webhook: Webhook) => void;
}) {
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState<string[]>(webhook.events);
  const [isActive, setActive] = useState(webhook.active);
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  // Saved elsewhere (another tab, the secret rotation): show the server's values. A reload that changed
  // nothing (after a test event) keeps what is being typed.
  useEffect(() => {
    setUrl(webhook.url);
    setEvents(webhook.events);
    setActive(webhook.active);
  }, [webhook.id, webhook.updated_at]);

  const changes = {
    ...(url.trim() !== webhook.url ? { url: url.trim() } : {}),
    ...(!sameEvents(events, webhook.events) ? { events } : {}),
    ...(isActive !== webhook.active ? { active: isActive } : {}),
  };
  const hasChanges = Object.keys(changes).length > 0;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!hasChanges) return;
    setError(undefined);
    setBusy(true);
    try {
      const saved = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: webhook.id } }, body: changes }),
      );
      notify("Webhook saved");
      onSaved(saved);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} aria-labelledby="edit-webhook" class="card">
      <h2 id="edit-webhook">Edit</h2>
      <ErrorNotice error={formError(error, EDIT_FIELDS)} title="The webhook could not be saved" />
      <Field label="URL" error={fieldError(error, "url")}>
        {(control) => (
          <input
            {...control}
            type="url"
            class="wide"
            required
            value={url}
            onInput={(event) => setUrl(event.currentTarget.value)}
          />
        )}
      </Field>
      <EventsFieldset value={events} error={fieldError(error, "events")} onChange={setEvents} />
      <Checkbox
        label="Active"
        hint="While inactive it receives no new events and its pending deliveries wait; turning it back on resumes them in order."
        error={fieldError(error, "active")}
        checked={isActive}
        onChange={setActive}
      />
      <div class="button-row">
        <button type="submit" disabled={isBusy || !hasChanges}>
          {isBusy ? "Saving…" : "Save changes"}
        </button>
        {hasChanges ? (
          <button
            type="button"
            class="button-secondary"
            onClick={() => {
              setUrl(webhook.url);
              setEvents(webhook.events);
              setActive(webhook.active);
              setError(undefined);
            }}
          >
            Discard changes
          </button>
        ) : null}
      </div>
    </form>
  );
}

/**
 * Replaces the signing secret (after a leak, or on a schedule). Deliveries from then on are signed with
 * the new one, so it is shown once here to put in the receiver.
 */
export function WebhookSecretRotation({ webhook }: { webhook: Webhook }) {
  const [secret, setSecret] = useState("");
  const [isConfirming, setConfirming] = useState(false);
  const [rotated, setRotated] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | undefined>();

  const rotate = async () => {
    setError(undefined);
    try {
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: webhook.id } }, body: { secret } }),
      );
      setRotated(secret);
      setSecret("");
      setConfirming(false);
      notify("Signing secret rotated");
    } catch (failure) {
      setError(asApiError(failure));
      setConfirming(false);
    }
  };

  return (
    <section aria-labelledby="rotate-secret" class="card">
      <h2 id="rotate-secret">Signing secret</h2>
      {rotated ? (
        <>
          <div class="notice notice-warn">
            <strong>Copy the new secret now: it won't be shown again.</strong>
            <p>Deliveries are signed with it from now on; give it to the receiver.</p>
          </div>
          <CopyField label="New signing secret" value={rotated} isCode />
          <div class="button-row">
            <button type="button" class="button-secondary" onClick={() => setRotated(null)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setError(undefined);
            setConfirming(true);
          }}
        >
          <p class="muted">The current secret is never shown. Rotate it to give the receiver a new one.</p>
          <ErrorNotice error={formError(error, ["secret"])} title="The secret could not be rotated" />
          <SecretField
            label="New signing secret"
            value={secret}
            isRequired
            error={fieldError(error, "secret")}
            onChange={setSecret}
          />
          <div class="button-row">
            <button type="submit" class="button-secondary">
              Rotate secret…
            </button>
          </div>
        </form>
      )}
      <ConfirmDialog
        title="Rotate the signing secret?"
        open={isConfirming}
        confirmLabel="Rotate secret"
        onConfirm={rotate}
        onClose={() => setConfirming(false)}
      >
        <p>
          Deliveries to <span class="code">{webhook.url}</span> are signed with the new secret from now on.
          Until the receiver has it, it will reject them as badly signed (and they will be retried).
        </p>
      </ConfirmDialog>
    </section>
  );
}
