import { createHash, randomBytes } from "node:crypto";
import { generateServiceProviderMetadata, SAML, ValidateInResponseTo } from "@node-saml/node-saml";
import { DOMParser } from "@xmldom/xmldom";
import { and, eq, gt, isNull } from "drizzle-orm";
import * as xpath from "xpath";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations, samlAssertions, ssoCodes, ssoRequests, users } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { AuthDeps } from "../auth/auth-deps";
import type { TokenPair } from "../auth/issue-session";
import type { SignedInUser } from "../auth/sign-in";
import type { DomainDeps } from "../deps";
import { DomainError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from "../errors";
import {
  assertRedirectUriAllowed,
  readStoredSso,
  type StoredSaml,
  samlServiceProviderUrls,
} from "./sso-settings-view";
import { auditSsoRefusal, resolveSsoUser, startSsoSession } from "./sso-user";

/** How long a sign-in may take at the IdP; the request is single-use and forgotten after this. */
export const SAML_REQUEST_TTL_SECONDS = 600;
/** The one-time code the ACS hands to the client's redirect_uri. */
export const SAML_CODE_TTL_SECONDS = 60;
/** Clock skew allowed between the IdP and this server. */
const CLOCK_SKEW_MS = 3 * 60 * 1000;

const requestKey = (id: string) => `saml:${id}`;
const codeDigest = (code: string) => createHash("sha256").update(code).digest("hex");

async function samlOrganization(deps: DomainDeps, organizationId: string) {
  const organization = await firstRow(
    deps.db.select().from(organizations).where(eq(organizations.id, organizationId)),
  );
  if (!organization) throw new NotFoundError("organization");
  if (organization.plan !== "enterprise")
    throw new ForbiddenError(
      "saml_requires_enterprise",
      "SAML single sign-on needs the enterprise plan",
      "the operator of this installation sets the plan: bulwark org set-plan --org <organization> --plan enterprise",
    );
  return { organization, saml: readStoredSso(organization.ssoSettings).saml };
}

function enabledSaml(saml: StoredSaml | undefined): StoredSaml {
  if (!saml?.enabled || !saml.idp_certificate || !saml.idp_sso_url || !saml.idp_entity_id)
    throw new ValidationError(
      "SAML single sign-on is not set up",
      [{ field: "organization_id", message: "this organization has no enabled SAML connection" }],
      undefined,
      "sso_connection_unknown",
    );
  return saml;
}

function serviceProvider(deps: DomainDeps, organizationId: string, saml: StoredSaml, requestId?: string) {
  const urls = samlServiceProviderUrls(deps.config.server.base_url, organizationId);
  return new SAML({
    issuer: urls.entityId,
    callbackUrl: urls.acsUrl,
    audience: urls.entityId,
    entryPoint: saml.idp_sso_url,
    idpIssuer: saml.idp_entity_id,
    idpCert: saml.idp_certificate ?? "",
    // Both the Response (which carries Destination and InResponseTo) and the assertion must be signed.
    wantAuthnResponseSigned: true,
    wantAssertionsSigned: true,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    // InResponseTo is checked here against the database (single-use, survives a restart), not by node-saml.
    validateInResponseTo: ValidateInResponseTo.never,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    ...(requestId ? { generateUniqueId: () => requestId } : {}),
  });
}

/** Bulwark's service-provider metadata for an organization: what its IdP is configured with. */
export async function samlMetadata(deps: DomainDeps, organizationId: string): Promise<string> {
  await samlOrganization(deps, organizationId);
  const urls = samlServiceProviderUrls(deps.config.server.base_url, organizationId);
  return generateServiceProviderMetadata({
    issuer: urls.entityId,
    callbackUrl: urls.acsUrl,
    wantAssertionsSigned: true,
    identifierFormat: null,
  });
}

/**
 * SP-initiated sign-in: stores the pending AuthnRequest (its ID is what the response's InResponseTo must
 * name) and returns the IdP's URL with the request (HTTP-Redirect binding).
 */
export async function startSamlSignIn(
  deps: DomainDeps,
  input: { organization_id: string; redirect_uri: string; state: string },
): Promise<string> {
  const { organization, saml } = await samlOrganization(deps, input.organization_id);
  const connection = enabledSaml(saml);
  assertRedirectUriAllowed(connection, input.redirect_uri, deps.config.server.base_url);
  const requestId = `_${randomBytes(20).toString("hex")}`;
  const now = deps.clock.now();
  await withTransaction(
    deps.db,
    async (tx) =>
      await tx.insert(ssoRequests).values({
        id: requestKey(requestId),
        provider: "saml",
        organizationId: organization.id,
        redirectUri: input.redirect_uri,
        clientState: input.state,
        createdAt: toIso(now),
        expiresAt: toIso(addSeconds(now, SAML_REQUEST_TTL_SECONDS)),
      }),
  );
  return serviceProvider(deps, organization.id, connection, requestId).getAuthorizeUrlAsync(
    input.state,
    undefined,
    {},
  );
}

function parseXml(xml: string) {
  const problems: string[] = [];
  const record = (message: string) => problems.push(message);
  const document = new DOMParser({
    errorHandler: { warning: () => {}, error: record, fatalError: record },
  }).parseFromString(xml, "text/xml");
  return problems.length > 0 || !document?.documentElement ? null : document;
}

const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";
const SAML_ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion";

function attributeValues(profile: Record<string, unknown>, ...names: string[]): string | null {
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  for (const name of names) {
    const value = attributes[name] ?? profile[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string" && first.trim()) return first.trim();
  }
  return null;
}

/** What the ACS answers: where to send the browser (the client's redirect_uri with a code or an error). */
export interface AcsOutcome {
  location: string;
}

/**
 * The assertion consumer service. The response must answer a pending request of this service
 * (InResponseTo; unsolicited responses are refused), carry the signatures of the organization's IdP on
 * both the Response and the assertion, name this ACS as Destination and as the assertion's Recipient, be
 * inside its validity window (3 minutes of skew) and not be replayed. Success: the client's redirect_uri
 * with a one-time code; a failure once the request is known: the redirect_uri with `error`.
 */
export async function finishSamlSignIn(
  deps: AuthDeps,
  input: { SAMLResponse: string; RelayState?: string; ip: string },
): Promise<AcsOutcome> {
  const xml = Buffer.from(input.SAMLResponse, "base64").toString("utf8");
  const document = xml.trim().startsWith("<") ? parseXml(xml) : null;
  if (!document)
    throw new ValidationError("invalid SAML response", [
      { field: "SAMLResponse", message: "must be a base64-encoded SAML Response (XML)" },
    ]);
  const root = document.documentElement;
  if (root.localName !== "Response" || root.namespaceURI !== SAMLP)
    throw new ValidationError("invalid SAML response", [
      { field: "SAMLResponse", message: "is not a samlp:Response" },
    ]);
  const inResponseTo = root.getAttribute("InResponseTo") ?? "";
  const request = inResponseTo
    ? await firstRow(
        deps.db
          .select()
          .from(ssoRequests)
          .where(eq(ssoRequests.id, requestKey(inResponseTo))),
      )
    : undefined;
  if (!request)
    throw new UnauthenticatedError(
      "sso_response_unsolicited",
      "single sign-on failed",
      inResponseTo
        ? "InResponseTo: names no sign-in this service started (responses the IdP sends on its own are refused)"
        : "InResponseTo: missing; IdP-initiated sign-in is refused, start at GET /api/v1/auth/sso/saml/login",
    );
  const organizationId = request.organizationId;
  // Once the request is known, the browser goes back to the client with the error, not to a JSON page.
  const backWithError = (error: DomainError): AcsOutcome => {
    const target = new URL(request.redirectUri);
    target.searchParams.set("error", error.reason);
    if (error.details) target.searchParams.set("error_description", error.details);
    target.searchParams.set("state", request.clientState ?? "");
    return { location: target.toString() };
  };
  const fail = async (error: DomainError): Promise<AcsOutcome> => {
    await auditSsoRefusal(deps, organizationId, "saml", null, input.ip, error);
    return backWithError(error);
  };
  const invalid = (details: string) =>
    fail(new UnauthenticatedError("sso_response_invalid", "single sign-on failed", details));
  const now = deps.clock.now();
  if (request.usedAt)
    return fail(
      new UnauthenticatedError(
        "sso_response_replayed",
        "single sign-on failed",
        "InResponseTo: this sign-in was already answered; a response works once",
      ),
    );
  if (request.expiresAt <= toIso(now))
    return invalid(
      `InResponseTo: the sign-in expired; it must finish within ${SAML_REQUEST_TTL_SECONDS / 60} minutes`,
    );
  let connection: StoredSaml;
  try {
    connection = enabledSaml((await samlOrganization(deps, organizationId)).saml);
  } catch (error) {
    if (error instanceof DomainError) return fail(error);
    throw error;
  }
  const urls = samlServiceProviderUrls(deps.config.server.base_url, organizationId);
  let profile: Record<string, unknown>;
  try {
    const result = await serviceProvider(deps, organizationId, connection).validatePostResponseAsync({
      SAMLResponse: input.SAMLResponse,
    });
    if (!result.profile) return invalid("Response: carries no assertion");
    profile = result.profile as unknown as Record<string, unknown>;
  } catch (error) {
    return invalid(`signature or conditions: ${(error as Error).message}`);
  }
  // node-saml uses idpIssuer for logout messages only: the Issuer of the Response and of the assertion
  // must both be the organization's IdP.
  const responseIssuer = String(
    xpath.select("string(/*[local-name()='Response']/*[local-name()='Issuer'])", document),
  ).trim();
  const assertionIssuer = typeof profile.issuer === "string" ? profile.issuer.trim() : "";
  if (
    assertionIssuer !== connection.idp_entity_id ||
    (responseIssuer !== "" && responseIssuer !== connection.idp_entity_id)
  )
    return invalid(
      `Issuer: the response comes from ${assertionIssuer || responseIssuer || "no issuer"}, not from ${connection.idp_entity_id}`,
    );
  // The Response is signed as a whole (checked above), so its Destination is the IdP's word.
  const destination = root.getAttribute("Destination");
  if (destination !== urls.acsUrl)
    return invalid(
      `Destination: the response is addressed to ${destination || "nobody"}, not to ${urls.acsUrl}`,
    );
  const assertion = parseXml((profile.getAssertionXml as () => string)());
  if (!assertion) return invalid("Assertion: cannot be read");
  const select = xpath.useNamespaces({ saml: SAML_ASSERTION });
  const assertionId = String(select("string(/saml:Assertion/@ID)", assertion));
  const confirmations = select(
    "/saml:Assertion/saml:Subject/saml:SubjectConfirmation[@Method='urn:oasis:names:tc:SAML:2.0:cm:bearer']/saml:SubjectConfirmationData",
    assertion,
  ) as Element[];
  const confirmation = confirmations.find((node) => node.getAttribute("Recipient") === urls.acsUrl);
  if (!confirmation)
    return invalid(
      `Recipient: no bearer SubjectConfirmationData names ${urls.acsUrl} (found ${confirmations.map((node) => node.getAttribute("Recipient") || "none").join(", ") || "none"})`,
    );
  const confirmedFor = confirmation.getAttribute("InResponseTo");
  if (confirmedFor && confirmedFor !== inResponseTo)
    return invalid("InResponseTo: the assertion answers another request than the Response");
  const notOnOrAfter = confirmation.getAttribute("NotOnOrAfter");
  const rememberUntil = new Date(
    Math.max(
      addSeconds(now, SAML_REQUEST_TTL_SECONDS).getTime(),
      (notOnOrAfter && Date.parse(notOnOrAfter)) || 0,
    ) + CLOCK_SKEW_MS,
  );
  if (!assertionId) return invalid("Assertion: has no ID");
  const accepted = await withTransaction(deps.db, async (tx) => {
    const claimed = await tx
      .update(ssoRequests)
      .set({ usedAt: toIso(now) })
      .where(and(eq(ssoRequests.id, request.id), isNull(ssoRequests.usedAt)))
      .returning({ id: ssoRequests.id });
    if (claimed.length === 0) return "request";
    const remembered = await tx
      .insert(samlAssertions)
      .values({ organizationId, assertionId, expiresAt: toIso(rememberUntil) })
      .onConflictDoNothing()
      .returning({ id: samlAssertions.assertionId });
    return remembered.length === 0 ? "assertion" : "ok";
  });
  if (accepted !== "ok")
    return fail(
      new UnauthenticatedError(
        "sso_response_replayed",
        "single sign-on failed",
        accepted === "request"
          ? "InResponseTo: this sign-in was already answered; a response works once"
          : `Assertion: ${assertionId} was already used`,
      ),
    );
  const subject = typeof profile.nameID === "string" ? profile.nameID : "";
  if (!subject) return invalid("NameID: the assertion names no subject");
  const email =
    attributeValues(
      profile,
      "email",
      "mail",
      "emailaddress",
      "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
    ) ?? (subject.includes("@") ? subject : null);
  const name = attributeValues(
    profile,
    "name",
    "displayName",
    "http://schemas.microsoft.com/identity/claims/displayname",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
  );
  let userId: string;
  try {
    const account = await resolveSsoUser(
      deps,
      organizationId,
      connection,
      {
        provider: "saml",
        issuer: connection.idp_entity_id ?? "",
        subject,
        email,
        emailVerified: true,
        name,
      },
      input.ip,
    );
    userId = account.id;
  } catch (error) {
    // resolveSsoUser audited the refusal already.
    if (error instanceof DomainError) return backWithError(error);
    throw error;
  }
  const code = `bwc_${randomBytes(32).toString("base64url")}`;
  await withTransaction(
    deps.db,
    async (tx) =>
      await tx.insert(ssoCodes).values({
        codeDigest: codeDigest(code),
        userId,
        provider: "saml",
        createdAt: toIso(now),
        expiresAt: toIso(addSeconds(now, SAML_CODE_TTL_SECONDS)),
      }),
  );
  const target = new URL(request.redirectUri);
  target.searchParams.set("code", code);
  target.searchParams.set("state", request.clientState ?? "");
  return { location: target.toString() };
}

/** Exchanges the ACS's one-time code (60 seconds, single-use) for tokens, exactly like a login. */
export async function exchangeSamlCode(
  deps: AuthDeps,
  input: { code: string; ip: string },
): Promise<{ tokens: TokenPair; user: SignedInUser }> {
  const now = deps.clock.now();
  const row = await withTransaction(
    deps.db,
    async (tx) =>
      await firstRow(
        tx
          .update(ssoCodes)
          .set({ usedAt: toIso(now) })
          .where(
            and(
              eq(ssoCodes.codeDigest, codeDigest(input.code)),
              isNull(ssoCodes.usedAt),
              gt(ssoCodes.expiresAt, toIso(now)),
            ),
          )
          .returning(),
      ),
  );
  if (!row)
    throw new UnauthenticatedError(
      "sso_code_invalid",
      "invalid code",
      `code: unknown, already used or older than ${SAML_CODE_TTL_SECONDS} seconds`,
    );
  const account = await firstRow(deps.db.select().from(users).where(eq(users.id, row.userId)));
  if (!account || account.deletedAt) throw new UnauthenticatedError("account_deleted", "account deleted");
  // The connection may have been turned off within the code's minute.
  enabledSaml((await samlOrganization(deps, account.organizationId)).saml);
  if (account.isDisabled || account.isRestricted)
    throw await auditSsoRefusal(
      deps,
      account.organizationId,
      "saml",
      account.email,
      input.ip,
      new UnauthenticatedError(
        account.isDisabled ? "account_disabled" : "account_restricted",
        account.isDisabled ? "account disabled" : "account restricted",
      ),
      account.id,
    );
  return startSsoSession(deps, account, "saml", input.ip);
}
