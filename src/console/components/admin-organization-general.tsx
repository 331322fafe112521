import { useState } from "preact/hooks";
import { fieldError, formError } from "../lib/api-errors";
import { formatNumber, humanize } from "../lib/format";
import { Link } from "../lib/router";
import { type Organization, type OrganizationChange, useOrganizationSave } from "./admin-organization-save";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";

/** The organization's name and whether everyone must use a second factor. */
export function OrganizationGeneralForm({
  organization,
  onSaved,
}: {
  organization: Organization;
  onSaved: (organization: Organization) => void;
}) {
  const [name, setName] = useState(organization.name);
  const [isMfaRequired, setMfaRequired] = useState(organization.require_mfa);
  const { error, isBusy, save } = useOrganizationSave(onSaved);

  const submit = (event: Event) => {
    event.preventDefault();
    const change: OrganizationChange = {};
    if (name.trim() !== organization.name) change.name = name.trim();
    if (isMfaRequired !== organization.require_mfa) change.require_mfa = isMfaRequired;
    if (Object.keys(change).length === 0) return;
    void save(change, "Organization saved");
  };

  // Requiring MFA while having none yourself is refused (409) with the way out: set yours up first.
  const mfaError =
    error?.reason === "mfa_not_enabled"
      ? "Set up your own second factor on your Account page first, then require it of everyone."
      : fieldError(error, "require_mfa");
  return (
    <section class="card" aria-labelledby="organization-title">
      <h2 id="organization-title">Organization</h2>
      <dl class="details">
        <dt>Plan</dt>
        <dd>{humanize(organization.plan)}</dd>
        <dt>Users</dt>
        <dd>{formatNumber(organization.user_count)}</dd>
        <dt>Devices</dt>
        <dd>{formatNumber(organization.device_count)}</dd>
        <dt>Organization ID</dt>
        <dd>
          <code>{organization.id}</code>
        </dd>
      </dl>
      <form onSubmit={submit} noValidate class="stack">
        <ErrorNotice
          error={error?.reason === "mfa_not_enabled" ? undefined : formError(error, ["name", "require_mfa"])}
          title="The organization was not saved"
        />
        <Field label="Name" error={fieldError(error, "name")}>
          {(control) => (
            <input
              {...control}
              value={name}
              maxLength={200}
              autoComplete="organization"
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <div>
          <Checkbox
            label="Require multi-factor authentication"
            hint="Everyone who signs in with a password must use a second factor (an authenticator app or a passkey). Users without one can only set one up, then sign in again. Sign-ins through your identity provider (SSO) rely on its own checks."
            checked={isMfaRequired}
            error={mfaError}
            onChange={setMfaRequired}
          />
          {error?.reason === "mfa_not_enabled" ? (
            <p class="small">
              <Link href="/account">Set up your second factor</Link>
            </p>
          ) : null}
        </div>
        <div class="button-row">
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Saving…" : "Save organization"}
          </button>
        </div>
      </form>
    </section>
  );
}
