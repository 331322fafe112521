import { useState } from "preact/hooks";
import { fieldError, formError } from "../lib/api-errors";
import { humanize } from "../lib/format";
import { type Organization, useOrganizationSave } from "./admin-organization-save";
import {
  type ConnectionCommon,
  ConnectionCommonFields,
  commonChange,
  commonOf,
  connectionFields,
} from "./admin-sso-fields";
import { CopyField } from "./copy";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";

const PREFIX = "sso.saml";
const INLINE_FIELDS = connectionFields(PREFIX, [
  "enabled",
  "idp_entity_id",
  "idp_sso_url",
  "idp_certificate",
]);

/**
 * Bulwark's side of the connection, for the IdP: the server's own URLs once a connection is stored,
 * else the same paths on this page's origin (what server.base_url normally is).
 */
function serviceProviderUrls(organization: Organization) {
  const saml = organization.sso.saml;
  const base = `${location.origin}/api/v1/auth/sso/saml`;
  return {
    metadata: saml?.sp_metadata_url ?? `${base}/metadata?organization_id=${organization.id}`,
    acs: saml?.acs_url ?? `${base}/acs`,
  };
}

/** The organization's SAML 2.0 identity provider; enterprise plan only, which the operator sets. */
export function SamlConnectionForm({
  organization,
  onSaved,
}: {
  organization: Organization;
  onSaved: (organization: Organization) => void;
}) {
  const stored = organization.sso.saml;
  const isEnterprise = organization.plan === "enterprise";
  const [isEnabled, setEnabled] = useState(stored?.enabled ?? false);
  const [entityId, setEntityId] = useState(stored?.idp_entity_id ?? "");
  const [ssoUrl, setSsoUrl] = useState(stored?.idp_sso_url ?? "");
  const [certificate, setCertificate] = useState(stored?.idp_certificate ?? "");
  const [common, setCommon] = useState<ConnectionCommon>(commonOf(stored));
  const { error, isBusy, save } = useOrganizationSave(onSaved);
  const urls = serviceProviderUrls(organization);

  const submit = (event: Event) => {
    event.preventDefault();
    const keepsOrSets = (value: string, before: string | undefined) => Boolean(value.trim() || before);
    void save(
      {
        sso: {
          saml: {
            enabled: isEnabled,
            ...(keepsOrSets(entityId, stored?.idp_entity_id) ? { idp_entity_id: entityId.trim() } : {}),
            ...(keepsOrSets(ssoUrl, stored?.idp_sso_url) ? { idp_sso_url: ssoUrl.trim() } : {}),
            ...(keepsOrSets(certificate, stored?.idp_certificate)
              ? { idp_certificate: certificate.trim() }
              : {}),
            ...commonChange(common),
          },
        },
      },
      "SAML settings saved",
    );
  };

  // Enabling SAML on the standard plan is a 403 whose details name sso.saml.enabled: show it there.
  const enabledError =
    error?.reason === "saml_requires_enterprise"
      ? error.body.message
      : fieldError(error, `${PREFIX}.enabled`);
  return (
    <section class="card" aria-labelledby="saml-title">
      <h2 id="saml-title">Single sign-on: SAML 2.0</h2>
      <p>
        Plan: <strong>{humanize(organization.plan)}</strong>.{" "}
        {isEnterprise
          ? "SAML sign-in is available."
          : "SAML needs the enterprise plan. The operator of this Bulwark installation sets it:"}
      </p>
      {isEnterprise ? null : (
        <pre>
          <code>bulwark org set-plan --org {organization.id} --plan enterprise</code>
        </pre>
      )}
      <h3>Give these to your identity provider</h3>
      <CopyField label="Service provider metadata URL (entity ID)" value={urls.metadata} isCode />
      <CopyField label="Assertion consumer service (ACS) URL" value={urls.acs} isCode />
      <p class="small muted">The IdP must sign the Response and the assertion.</p>
      <h3>Your identity provider's details</h3>
      <form onSubmit={submit} noValidate>
        <ErrorNotice
          error={error?.reason === "saml_requires_enterprise" ? undefined : formError(error, INLINE_FIELDS)}
          title="The SAML settings were not saved"
        />
        <Checkbox
          label="Enabled"
          hint={
            isEnterprise
              ? "People of the allowed domains can sign in through this IdP."
              : "Available on the enterprise plan; you can fill in and save the details before."
          }
          checked={isEnabled}
          disabled={!isEnterprise && !isEnabled}
          error={enabledError}
          onChange={setEnabled}
        />
        <Field label="IdP entity ID" error={fieldError(error, `${PREFIX}.idp_entity_id`)}>
          {(control) => (
            <input
              {...control}
              value={entityId}
              maxLength={2000}
              spellcheck={false}
              autoComplete="off"
              placeholder="https://idp.example.com/saml"
              onInput={(event) => setEntityId(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="IdP single sign-on URL"
          hint="Its HTTP-Redirect binding address."
          error={fieldError(error, `${PREFIX}.idp_sso_url`)}
        >
          {(control) => (
            <input
              {...control}
              type="url"
              value={ssoUrl}
              maxLength={2000}
              spellcheck={false}
              autoComplete="off"
              placeholder="https://idp.example.com/saml/sso"
              onInput={(event) => setSsoUrl(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="IdP signing certificate"
          hint="PEM (-----BEGIN CERTIFICATE-----…), or the base64 body from the IdP's metadata."
          error={fieldError(error, `${PREFIX}.idp_certificate`)}
        >
          {(control) => (
            <textarea
              {...control}
              class="code"
              rows={6}
              value={certificate}
              maxLength={20000}
              spellcheck={false}
              onInput={(event) => setCertificate(event.currentTarget.value)}
            />
          )}
        </Field>
        <ConnectionCommonFields prefix={PREFIX} value={common} error={error} onChange={setCommon} />
        <div class="button-row">
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Saving…" : "Save SAML"}
          </button>
        </div>
      </form>
    </section>
  );
}
