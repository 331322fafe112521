import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatDateTime } from "../lib/format";
import type { Scope, Session } from "../lib/session";
import { CopyField } from "./copy";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";

export type CreatedApiKey = Schemas["CreatedApiKey"];

/** Every scope (the README's roles and scopes), with what it lets a key do. */
const SCOPES: readonly { scope: Scope; description: string }[] = [
  { scope: "devices:read", description: "See devices, their compliance and activity" },
  {
    scope: "devices:write",
    description: "Enrollment tokens; suspend, wipe and delete devices; assign policies",
  },
  { scope: "policies:read", description: "See policies and their history" },
  { scope: "policies:write", description: "Create, change and delete policies" },
  { scope: "users:read", description: "See users" },
  { scope: "users:write", description: "Create, change and delete users" },
  { scope: "audit:read", description: "Read the audit log" },
  {
    scope: "vpn:read",
    description: "Only the VPN server's peer list: the key for bulwark vpn sync on the VPN host",
  },
  {
    scope: "vpn:report",
    description:
      "Only the handshakes the VPN server sees, with vpn:read for bulwark vpn sync: phones without an agent go online by them",
  },
  { scope: "admin", description: "Everything, including webhooks and organization settings" },
];

const FIELDS = ["name", "scopes", "expires_in_days"];

/** The scopes a user may give a key: a key is never wider than its creator (admin has them all). */
export function grantableScopes(session: Session | null | undefined) {
  const own = session?.scopes ?? [];
  return own.includes("admin") ? SCOPES : SCOPES.filter((item) => own.includes(item.scope));
}

/** Creates an API key: a name to recognise it, its scopes, and how many days it lives. */
export function ApiKeyForm({
  session,
  onCreated,
}: {
  session: Session | null | undefined;
  onCreated: (key: CreatedApiKey) => void;
}) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [days, setDays] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const choices = grantableScopes(session);

  if (choices.length === 0) {
    return (
      <section aria-labelledby="new-key">
        <h2 id="new-key">Create an API key</h2>
        <p>
          Your role carries no API scopes, so a key could do nothing. Ask an administrator if a script needs
          access.
        </p>
      </section>
    );
  }

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const key = await unwrap(
        api.POST("/api/v1/auth/api-keys", {
          body: { name: name.trim(), scopes, ...(days ? { expires_in_days: Number(days) } : {}) },
        }),
      );
      setName("");
      setScopes([]);
      setDays("");
      onCreated(key);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };
  const scopesError = fieldError(error, "scopes");

  return (
    <form onSubmit={submit} aria-labelledby="new-key">
      <h2 id="new-key">Create an API key</h2>
      <ErrorNotice error={formError(error, FIELDS)} title="The key could not be created" />
      <Field
        label="Name"
        hint="What uses it, to recognise it later (for example “inventory sync”)."
        error={fieldError(error, "name")}
      >
        {(control) => (
          <input
            {...control}
            required
            maxLength={200}
            autoComplete="off"
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        )}
      </Field>
      <fieldset aria-describedby={scopesError ? "key-scopes-error" : "key-scopes-hint"}>
        <legend>Scopes</legend>
        <p id="key-scopes-hint" class="hint">
          Choose the least it needs; you can only give scopes you have yourself.
        </p>
        <div class="grid">
          {choices.map((item) => (
            <div key={item.scope}>
              <Checkbox
                label={item.scope}
                hint={item.description}
                checked={scopes.includes(item.scope)}
                onChange={(isChecked) =>
                  setScopes(
                    isChecked ? [...scopes, item.scope] : scopes.filter((scope) => scope !== item.scope),
                  )
                }
              />
            </div>
          ))}
        </div>
        {scopesError ? (
          <p id="key-scopes-error" class="field-error">
            <span aria-hidden="true">⚠ </span>
            {scopesError}
          </p>
        ) : null}
      </fieldset>
      <div class="filters">
        <Field
          label="Expires after (days)"
          hint="1 to 3650. Leave it empty for the server's default (90 days unless configured otherwise)."
          error={fieldError(error, "expires_in_days")}
        >
          {(control) => (
            <input
              {...control}
              type="number"
              inputMode="numeric"
              min={1}
              max={3650}
              step={1}
              value={days}
              onInput={(event) => setDays(event.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      <div class="button-row">
        <button type="submit" disabled={isBusy}>
          {isBusy ? "Creating…" : "Create key"}
        </button>
      </div>
    </form>
  );
}

/** The new key, shown this once, with how to present it. */
export function ApiKeyCreated({ apiKey, onDone }: { apiKey: CreatedApiKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const example = `curl -H 'Authorization: Bearer ${apiKey.key}' ${location.origin}/api/v1/devices`;
  return (
    <section aria-labelledby="key-created">
      <h2 id="key-created" ref={heading} tabIndex={-1}>
        API key “{apiKey.name}” created
      </h2>
      <div class="notice notice-warn">
        <strong>Copy it now: it won't be shown again.</strong>
        <p>
          It works until {formatDateTime(apiKey.expires_at)} or until you revoke it. Keep it in a secret
          store, not in code.
        </p>
      </div>
      <CopyField label="API key" value={apiKey.key} isCode />
      <p>
        Send it with each request as <code>Authorization: Bearer &lt;key&gt;</code>, or as{" "}
        <code>X-API-Key: &lt;key&gt;</code>.
      </p>
      <CopyField label="Example request" value={example} isCode />
      <div class="button-row">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
