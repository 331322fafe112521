import { X509Certificate } from "node:crypto";
import { and, eq, ne } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { jsonIsTrue, jsonText } from "../../db/dialect";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { ConflictError, type FieldError, ForbiddenError, ValidationError } from "../errors";
import { checkIssuerUrl, discoveryFailed, providerConfiguration } from "./oidc-provider-client";
import {
  newConnection,
  readStoredSso,
  type SsoSettingsInput,
  type StoredOidc,
  type StoredSaml,
  type StoredSso,
} from "./sso-settings-view";

/**
 * A redirect URI: an absolute http(s) URL without a fragment (RFC 6749 section 3.1.2) and without a query
 * (the provider's answer is added as the query, and compared by exact match).
 */
function checkRedirectUris(uris: string[], field: string): FieldError[] {
  return uris.flatMap((uri, index) => {
    const url = URL.canParse(uri) ? new URL(uri) : null;
    return url &&
      (url.protocol === "https:" || url.protocol === "http:") &&
      !uri.includes("#") &&
      !uri.includes("?")
      ? []
      : [
          {
            field: `${field}.${index}`,
            message: "must be an absolute http(s) URL without query or fragment",
            received: uri,
          },
        ];
  });
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

function normalizeDomains(domains: string[], field: string, errors: FieldError[]): string[] {
  return [
    ...new Set(
      domains.map((domain, index) => {
        const normalized = domain.trim().toLowerCase().replace(/^@/, "");
        if (!DOMAIN.test(normalized))
          errors.push({
            field: `${field}.${index}`,
            message: "must be a domain name (example.com)",
            received: domain,
          });
        return normalized;
      }),
    ),
  ];
}

/** The IdP certificate as PEM, whether it came as PEM or as the bare base64 that IdP metadata holds. */
export function normalizeCertificate(text: string): string | null {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return null;
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join("\n")}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return null;
  }
}

function required(connection: object, fields: string[], prefix: string): FieldError[] {
  return fields
    .filter((field) => !(connection as Record<string, unknown>)[field])
    .map((field) => ({ field: `${prefix}.${field}`, message: "required while the connection is enabled" }));
}

/**
 * Merges an administrator's change into the stored connections and checks the result: the OIDC issuer
 * answers discovery with these client credentials, the IdP certificate parses, redirect URIs are absolute.
 * Returns what to store (the client secret sealed). Runs before the transaction: discovery is a request.
 */
export async function prepareSsoSettings(
  deps: DomainDeps,
  organizationId: string,
  current: { ssoSettings: Record<string, unknown>; plan: string },
  input: SsoSettingsInput,
): Promise<StoredSso> {
  const stored = readStoredSso(current.ssoSettings);
  const next: StoredSso = { ...stored };
  const errors: FieldError[] = [];
  if (input.oidc) {
    const { client_secret, ...fields } = input.oidc;
    const oidc: StoredOidc = {
      ...(stored.oidc ?? newConnection()),
      ...fields,
    } as StoredOidc;
    if (client_secret !== undefined) {
      if (client_secret === "") delete oidc.client_secret;
      else oidc.client_secret = deps.secrets.seal(client_secret);
    }
    if (fields.issuer !== undefined) {
      oidc.issuer = fields.issuer.replace(/\/+$/, "") || fields.issuer;
      try {
        checkIssuerUrl(deps, oidc.issuer, "sso.oidc.issuer");
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        errors.push(...error.errors);
      }
    }
    errors.push(...checkRedirectUris(oidc.redirect_uris, "sso.oidc.redirect_uris"));
    oidc.allowed_domains = normalizeDomains(oidc.allowed_domains, "sso.oidc.allowed_domains", errors);
    if (oidc.enabled) {
      errors.push(...required(oidc, ["issuer", "client_id"], "sso.oidc"));
    }
    next.oidc = oidc;
  }
  if (input.saml) {
    const saml: StoredSaml = {
      ...(stored.saml ?? newConnection()),
      ...input.saml,
    } as StoredSaml;
    if (input.saml.idp_certificate !== undefined) {
      const pem = normalizeCertificate(input.saml.idp_certificate);
      if (!pem)
        errors.push({
          field: "sso.saml.idp_certificate",
          message: "must be an X.509 certificate (PEM, or the base64 body from the IdP's metadata)",
        });
      else saml.idp_certificate = pem;
    }
    if (input.saml.idp_sso_url !== undefined) {
      const url = URL.canParse(input.saml.idp_sso_url) ? new URL(input.saml.idp_sso_url) : null;
      if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
        errors.push({
          field: "sso.saml.idp_sso_url",
          message: "must be an absolute http(s) URL",
          received: input.saml.idp_sso_url,
        });
    }
    errors.push(...checkRedirectUris(saml.redirect_uris, "sso.saml.redirect_uris"));
    saml.allowed_domains = normalizeDomains(saml.allowed_domains, "sso.saml.allowed_domains", errors);
    if (saml.enabled) {
      errors.push(...required(saml, ["idp_entity_id", "idp_sso_url", "idp_certificate"], "sso.saml"));
    }
    next.saml = saml;
  }
  if (errors.length > 0) throw new ValidationError("invalid SSO settings", errors);
  if (input.saml && next.saml?.enabled && current.plan !== "enterprise")
    throw new ForbiddenError(
      "saml_requires_enterprise",
      "SAML single sign-on needs the enterprise plan",
      "sso.saml.enabled: the operator sets the plan (bulwark org set-plan)",
    );
  const oidc = next.oidc;
  if (input.oidc && oidc?.enabled && oidc.issuer && oidc.client_id) {
    await assertClientIdFree(deps.db, organizationId, oidc.client_id);
    try {
      await providerConfiguration(
        deps,
        {
          issuer: oidc.issuer,
          clientId: oidc.client_id,
          clientSecret: oidc.client_secret ? deps.secrets.open(oidc.client_secret) : "",
        },
        { fresh: true },
      );
    } catch (error) {
      throw discoveryFailed(oidc.issuer, error);
    }
  }
  return next;
}

/**
 * The client_id selects the organization at sign-in, so two organizations' enabled connections cannot
 * share one. Checked before discovery, and again inside the transaction that saves.
 */
export async function assertClientIdFree(
  db: DbOrTx,
  organizationId: string,
  clientId: string,
): Promise<void> {
  const taken = await firstRow(
    db
      .select({ id: organizations.id })
      .from(organizations)
      .where(
        and(
          ne(organizations.id, organizationId),
          jsonIsTrue(db, organizations.ssoSettings, ["oidc", "enabled"]),
          eq(jsonText(db, organizations.ssoSettings, ["oidc", "client_id"]), clientId),
        ),
      ),
  );
  if (taken)
    throw new ConflictError(
      "sso_client_id_taken",
      "another organization's OIDC connection uses this client_id",
      "sso.oidc.client_id: each organization registers its own client at the provider (the client_id selects the organization at sign-in)",
    );
}

/** The organization an OIDC client_id selects, with its connection; unknown or disabled: null. */
export async function findOidcConnection(deps: DomainDeps, clientId: string) {
  const row = await firstRow(
    deps.db
      .select()
      .from(organizations)
      .where(
        and(
          jsonIsTrue(deps.db, organizations.ssoSettings, ["oidc", "enabled"]),
          eq(jsonText(deps.db, organizations.ssoSettings, ["oidc", "client_id"]), clientId),
        ),
      ),
  );
  const oidc = row ? readStoredSso(row.ssoSettings).oidc : undefined;
  return row && oidc?.enabled ? { organization: row, oidc } : null;
}
