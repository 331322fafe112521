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

/**
 * The email domains the connections claim, and whether the "Sign in with single sign-on" button finds
 * this organization by them: on an installation of several organizations, only once the operator
 * confirmed each (a tenant cannot send another's people to its identity provider).
 */
function SsoDomains({ organization }: { organization: Organization }) {
  const domains = organization.sso_domains;
  if (domains.length === 0) return null;
  const waiting = domains.filter((domain) => !domain.discoverable);
  return (
    <section class="card" aria-labelledby="sso-domains-title">
      <h2 id="sso-domains-title">Email domains</h2>
      <p>
        People whose email is at these domains sign in with this organization's identity provider. A domain
        belongs to one organization of this Bulwark.
      </p>
      <ul>
        {domains.map((domain) => (
          <li key={domain.domain}>
            <strong>{domain.domain}</strong>:{" "}
            {domain.discoverable
              ? "the single sign-on button finds this organization"
              : "waiting for the operator of this Bulwark to confirm it"}
          </li>
        ))}
      </ul>
      {waiting.length > 0 ? (
        <div class="notice notice-warn">
          <p>
            This Bulwark serves several organizations, so its operator confirms which one each domain signs in
            with: until then, the single sign-on button on the sign-in page does not find this organization
            for people of {waiting.map((domain) => domain.domain).join(", ")}. The operator runs, on the
            Bulwark host:
          </p>
          <pre>
            <code>
              {waiting
                .map((domain) => `bulwark org sso-domain add --org ${organization.id} ${domain.domain}`)
                .join("\n")}
            </code>
          </pre>
        </div>
      ) : null}
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
          <SsoDomains organization={data} />
        </>
      ) : organization.isLoading ? (
        <Loading label="Loading the organization" />
      ) : null}
    </>
  );
}
