import { api, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { OrganizationGeneralForm } from "../components/admin-organization-general";
import type { Organization } from "../components/admin-organization-save";
import { OidcConnectionForm } from "../components/admin-sso-oidc";
import { SamlConnectionForm } from "../components/admin-sso-saml";
import { ErrorNotice, Loading } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { humanize } from "../lib/format";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

/** What a non-admin who follows a link here may know: the settings in words, without the forms. */
function ReadOnlySummary({ organization }: { organization: Organization }) {
  const isOn = (value: boolean | undefined) => (value ? "On" : "Off");
  return (
    <section class="card" aria-labelledby="summary-title">
      <h2 id="summary-title">{organization.name}</h2>
      <p class="notice notice-warn">Only an admin can change these settings.</p>
      <dl class="details">
        <dt>Plan</dt>
        <dd>{humanize(organization.plan)}</dd>
        <dt>Multi-factor authentication required</dt>
        <dd>{organization.require_mfa ? "Yes" : "No"}</dd>
        <dt>OpenID Connect sign-in</dt>
        <dd>{isOn(organization.sso.oidc?.enabled)}</dd>
        <dt>SAML sign-in</dt>
        <dd>{isOn(organization.sso.saml?.enabled)}</dd>
      </dl>
    </section>
  );
}

/** The organization's name, its MFA requirement and its single sign-on connections (admins only). */
export function SettingsPage(_: PageProps) {
  const isAdmin = can(useStore(sessionStore), "admin");
  const organization = useApi(() => unwrap(api.GET("/api/v1/organizations/current")), []);
  const data = organization.data;
  return (
    <>
      <PageHeader
        title="Organization settings"
        description="The organization's name, how its people sign in, and its identity providers."
      />
      <ErrorNotice error={organization.error} title="The organization could not be loaded" />
      {data && !isAdmin ? (
        <ReadOnlySummary organization={data} />
      ) : data ? (
        // Each form starts from what the server holds; after a save, only the forms whose part of the
        // organization changed start again (an unsaved edit in another form is kept).
        <>
          <OrganizationGeneralForm
            key={`${data.name}|${data.require_mfa}`}
            organization={data}
            onSaved={organization.reload}
          />
          <OidcConnectionForm
            key={JSON.stringify(data.sso.oidc ?? null)}
            organization={data}
            onSaved={organization.reload}
          />
          <SamlConnectionForm
            key={`${data.plan}|${JSON.stringify(data.sso.saml ?? null)}`}
            organization={data}
            onSaved={organization.reload}
          />
        </>
      ) : organization.isLoading ? (
        <Loading label="Loading the organization" />
      ) : null}
    </>
  );
}
