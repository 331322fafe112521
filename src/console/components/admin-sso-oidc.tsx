import { useState } from "preact/hooks";
import { fieldError, formError } from "../lib/api-errors";
import { type Organization, useOrganizationSave } from "./admin-organization-save";
import {
  type ConnectionCommon,
  ConnectionCommonFields,
  commonChange,
  commonOf,
  connectionFields,
  consoleCallbackUrl,
} from "./admin-sso-fields";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";

const PREFIX = "sso.oidc";
const INLINE_FIELDS = connectionFields(PREFIX, ["enabled", "issuer", "client_id", "client_secret"]);

/** The organization's OpenID Connect provider (Keycloak, Entra ID, Okta, Google...). */
export function OidcConnectionForm({
  organization,
  onSaved,
}: {
  organization: Organization;
  onSaved: (organization: Organization) => void;
}) {
  const stored = organization.sso.oidc;
  const [isEnabled, setEnabled] = useState(stored?.enabled ?? false);
  const [issuer, setIssuer] = useState(stored?.issuer ?? "");
  const [clientId, setClientId] = useState(stored?.client_id ?? "");
  const [clientSecret, setClientSecret] = useState("");
  const [isSecretRemoved, setSecretRemoved] = useState(false);
  const [common, setCommon] = useState<ConnectionCommon>(commonOf(stored));
  const { error, isBusy, save } = useOrganizationSave(onSaved);

  const submit = (event: Event) => {
    event.preventDefault();
    // Blank text fields that were never set are left out (the server would call them malformed); a
    // blank secret keeps the stored one: it is write-only.
    void save(
      {
        sso: {
          oidc: {
            enabled: isEnabled,
            ...(issuer.trim() || stored?.issuer ? { issuer: issuer.trim() } : {}),
            ...(clientId.trim() || stored?.client_id ? { client_id: clientId.trim() } : {}),
            ...(isSecretRemoved
              ? { client_secret: "" }
              : clientSecret
                ? { client_secret: clientSecret }
                : {}),
            ...commonChange(common),
          },
        },
      },
      "OpenID Connect settings saved",
    );
  };

  // Another organization's connection using this client_id is a 409 without field errors.
  const clientIdError =
    error?.reason === "sso_client_id_taken" ? error.body.message : fieldError(error, `${PREFIX}.client_id`);
  return (
    <section class="card" aria-labelledby="oidc-title">
      <h2 id="oidc-title">Single sign-on: OpenID Connect</h2>
      <p class="muted">
        Register a web application (confidential client) at your identity provider with{" "}
        <code>{consoleCallbackUrl()}</code> as a redirect URI, then fill in what it gives you. Saving checks
        that the issuer answers.
      </p>
      <form onSubmit={submit} noValidate>
        <ErrorNotice
          error={error?.reason === "sso_client_id_taken" ? undefined : formError(error, INLINE_FIELDS)}
          title="The OpenID Connect settings were not saved"
        />
        <Checkbox
          label="Enabled"
          hint="People of the allowed domains can sign in through this provider."
          checked={isEnabled}
          error={fieldError(error, `${PREFIX}.enabled`)}
          onChange={setEnabled}
        />
        <Field
          label="Issuer URL"
          hint="The provider's issuer, e.g. https://idp.example.com/realms/corp (its /.well-known/openid-configuration must answer)."
          error={fieldError(error, `${PREFIX}.issuer`)}
        >
          {(control) => (
            <input
              {...control}
              type="url"
              value={issuer}
              maxLength={2000}
              spellcheck={false}
              autoComplete="off"
              placeholder="https://idp.example.com"
              onInput={(event) => setIssuer(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Client ID" error={clientIdError}>
          {(control) => (
            <input
              {...control}
              value={clientId}
              maxLength={500}
              spellcheck={false}
              autoComplete="off"
              onInput={(event) => setClientId(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="Client secret"
          hint={
            stored?.has_client_secret
              ? "A secret is stored (encrypted; it is never shown). Leave blank to keep it, or type a new one to replace it."
              : "None stored. Leave blank for a public client that uses PKCE alone."
          }
          error={fieldError(error, `${PREFIX}.client_secret`)}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              value={clientSecret}
              maxLength={2000}
              autoComplete="new-password"
              disabled={isSecretRemoved}
              onInput={(event) => setClientSecret(event.currentTarget.value)}
            />
          )}
        </Field>
        {stored?.has_client_secret ? (
          <Checkbox
            label="Remove the stored client secret"
            hint="For a provider client that has become public (PKCE only)."
            checked={isSecretRemoved}
            onChange={setSecretRemoved}
          />
        ) : null}
        <ConnectionCommonFields prefix={PREFIX} value={common} error={error} onChange={setCommon} />
        <div class="button-row">
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Checking and saving…" : "Save OpenID Connect"}
          </button>
        </div>
      </form>
    </section>
  );
}
