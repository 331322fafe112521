import { type Static, Type } from "@sinclair/typebox";
import { ROLES } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { ValidationError } from "../errors";

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  maxItems: 20,
  description:
    "Absolute http(s) URLs of your application that may receive the result of a sign-in; a sign-in naming any other is refused before anything is sent to the identity provider. The console's own {base_url}/console/sso/callback is always allowed besides these (so the list may be empty when only the console signs in)",
});
const AllowedDomains = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
  maxItems: 100,
  description:
    "Email domains whose users are created on their first sign-in when auto_provision is on (example.com); empty: nobody is created, existing users still sign in",
});
const DefaultRole = literalUnion(ROLES, {
  description: "Role of users created on their first sign-in (member)",
});
const AutoProvision = Type.Boolean({
  description: "Create users of allowed_domains on their first sign-in (true)",
});

/** An OpenID Connect connection as an administrator sends it: every field optional, merged into the stored one. */
export const OidcSettingsInputSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    issuer: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          "The provider's issuer URL; its /.well-known/openid-configuration must answer when the connection is saved enabled",
      }),
    ),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    client_secret: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          'Write-only, stored encrypted; never returned (has_client_secret says whether one is set). Leave out to keep the stored one; "" removes it (a public client using PKCE alone)',
      }),
    ),
    redirect_uris: Type.Optional(RedirectUris),
    allowed_domains: Type.Optional(AllowedDomains),
    default_role: Type.Optional(DefaultRole),
    auto_provision: Type.Optional(AutoProvision),
  },
  { additionalProperties: false },
);

/** A SAML 2.0 connection as an administrator sends it: every field optional, merged into the stored one. */
export const SamlSettingsInputSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "Needs the enterprise plan" })),
    idp_entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    idp_sso_url: Type.Optional(
      Type.String({ maxLength: 2000, description: "The IdP's HTTP-Redirect single sign-on URL" }),
    ),
    idp_certificate: Type.Optional(
      Type.String({
        maxLength: 20000,
        description: "The IdP's signing certificate: PEM, or the base64 body alone as IdP metadata shows it",
      }),
    ),
    redirect_uris: Type.Optional(RedirectUris),
    allowed_domains: Type.Optional(AllowedDomains),
    default_role: Type.Optional(DefaultRole),
    auto_provision: Type.Optional(AutoProvision),
  },
  { additionalProperties: false },
);

export const SsoSettingsInputSchema = Type.Object(
  { oidc: Type.Optional(OidcSettingsInputSchema), saml: Type.Optional(SamlSettingsInputSchema) },
  { additionalProperties: false },
);

/** The connections as responses show them: the client secret replaced by has_client_secret. */
export const SsoSettingsSchema = Type.Object(
  {
    oidc: Type.Optional(
      Type.Object({
        enabled: Type.Boolean(),
        issuer: Type.Optional(Type.String()),
        client_id: Type.Optional(Type.String()),
        has_client_secret: Type.Boolean(),
        redirect_uris: Type.Array(Type.String()),
        allowed_domains: Type.Array(Type.String()),
        default_role: DefaultRole,
        auto_provision: Type.Boolean(),
      }),
    ),
    saml: Type.Optional(
      Type.Object({
        enabled: Type.Boolean(),
        idp_entity_id: Type.Optional(Type.String()),
        idp_sso_url: Type.Optional(Type.String()),
        idp_certificate: Type.Optional(Type.String({ description: "PEM" })),
        redirect_uris: Type.Array(Type.String()),
        allowed_domains: Type.Array(Type.String()),
        default_role: DefaultRole,
        auto_provision: Type.Boolean(),
        sp_metadata_url: Type.String({
          description: "Give this to the IdP: Bulwark's service-provider metadata for this organization",
        }),
        acs_url: Type.String({ description: "Bulwark's assertion consumer service URL" }),
      }),
    ),
  },
  { title: "SsoSettings" },
);

export type SsoSettingsInput = Static<typeof SsoSettingsInputSchema>;
export type SsoSettingsView = Static<typeof SsoSettingsSchema>;
type Role = (typeof ROLES)[number];

interface StoredConnectionCommon {
  enabled: boolean;
  redirect_uris: string[];
  allowed_domains: string[];
  default_role: Role;
  auto_provision: boolean;
}

/** An OIDC connection as stored: client_secret sealed. */
export interface StoredOidc extends StoredConnectionCommon {
  issuer?: string;
  client_id?: string;
  client_secret?: string;
}

export interface StoredSaml extends StoredConnectionCommon {
  idp_entity_id?: string;
  idp_sso_url?: string;
  idp_certificate?: string;
}

export interface StoredSso {
  oidc?: StoredOidc;
  saml?: StoredSaml;
}

const COMMON_DEFAULTS: StoredConnectionCommon = {
  enabled: false,
  redirect_uris: [],
  allowed_domains: [],
  default_role: "member",
  auto_provision: true,
};

/** A connection with nothing set yet: what a first change is merged into. */
export function newConnection(): StoredConnectionCommon {
  return { ...COMMON_DEFAULTS };
}

/** The console's page that finishes a sign-in: a redirect_uri every connection allows. */
export function consoleSsoCallbackUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/console/sso/callback`;
}

/**
 * A sign-in may send its result only to one of the connection's redirect_uris, exactly, or to this
 * server's own console (`{base_url}/console/sso/callback`); 400 otherwise.
 */
export function assertRedirectUriAllowed(
  connection: StoredConnectionCommon,
  redirectUri: string,
  baseUrl: string,
): void {
  if (connection.redirect_uris.includes(redirectUri) || redirectUri === consoleSsoCallbackUrl(baseUrl))
    return;
  throw new ValidationError(
    "redirect_uri not allowed",
    [
      {
        field: "redirect_uri",
        message: "must be exactly one of the connection's redirect_uris, or the console's sign-in callback",
        received: redirectUri,
      },
    ],
    undefined,
    "sso_redirect_uri_not_allowed",
  );
}

/** The stored settings with every default filled in (rows saved by older versions lack the newer fields). */
export function readStoredSso(raw: Record<string, unknown>): StoredSso {
  const stored = raw as StoredSso;
  return {
    ...(stored.oidc ? { oidc: { ...COMMON_DEFAULTS, ...stored.oidc } } : {}),
    ...(stored.saml ? { saml: { ...COMMON_DEFAULTS, ...stored.saml } } : {}),
  };
}

/** Bulwark's own SAML endpoints for an organization. */
export function samlServiceProviderUrls(baseUrl: string, organizationId: string) {
  const api = `${baseUrl.replace(/\/+$/, "")}/api/v1/auth/sso/saml`;
  return {
    entityId: `${api}/metadata?organization_id=${organizationId}`,
    acsUrl: `${api}/acs`,
  };
}

/** What responses show: never the client secret. */
export function ssoSettingsView(
  raw: Record<string, unknown>,
  baseUrl: string,
  organizationId: string,
): SsoSettingsView {
  const { oidc, saml } = readStoredSso(raw);
  const view: SsoSettingsView = {};
  if (oidc) {
    const { client_secret, ...rest } = oidc;
    view.oidc = { ...rest, has_client_secret: Boolean(client_secret) };
  }
  if (saml) {
    const urls = samlServiceProviderUrls(baseUrl, organizationId);
    view.saml = { ...saml, sp_metadata_url: urls.entityId, acs_url: urls.acsUrl };
  }
  return view;
}
