import { type Static, Type } from "@sinclair/typebox";
import { and, eq, isNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { selectNewestFirstPage } from "../../db/paged-query";
import { apiKeys } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ForbiddenError, NotFoundError, ValidationError } from "../errors";
import { API_KEY_PREFIX } from "./authenticate";
import type { Principal } from "./principal";
import { hasScope, isScope, ROLE_SCOPES, SCOPES, type Scope } from "./scopes";

/** An API key as listed; the key itself is only returned at creation. */
export const ApiKeySchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    key_prefix: Type.String({ description: "The first characters of the key, to recognise it" }),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    expires_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()]),
    revoked_at: Type.Union([Timestamp, Type.Null()]),
  },
  { title: "ApiKey" },
);

export type ApiKeyView = Static<typeof ApiKeySchema>;

export function toApiKeyView(row: typeof apiKeys.$inferSelect): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    scopes: row.scopes,
    created_at: row.createdAt,
    expires_at: row.expiresAt,
    last_used_at: row.lastUsedAt,
    revoked_at: row.revokedAt,
  };
}

/**
 * Creates an API key for the calling user. The key (`bwk_` + 256 random bits) is returned once and
 * stored only as a SHA-256 hash. Its scopes may not exceed what the creator's role grants.
 */
export async function createApiKey(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { name: string; scopes: string[]; expiresInDays?: number },
): Promise<ApiKeyView & { key: string }> {
  assertSignedInUser(principal);
  const unknown = input.scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new ValidationError(
      "invalid request body",
      unknown.map((scope) => ({
        field: "scopes",
        message: `unknown scope "${scope}"; the scopes are ${SCOPES.join(", ")}`,
        received: scope,
      })),
    );
  }
  const creatorScopes = principal.kind === "api_key" ? principal.scopes : ROLE_SCOPES[principal.role];
  const tooWide = (input.scopes as Scope[]).filter((scope) => !hasScope(creatorScopes, scope));
  if (tooWide.length > 0) {
    throw new ForbiddenError(
      "scope_not_grantable",
      "insufficient permissions",
      `you cannot grant scopes you do not have: ${tooWide.join(", ")}`,
    );
  }
  const now = deps.clock.now();
  const key = generateSecret(32, API_KEY_PREFIX);
  const row = {
    id: newId(),
    organizationId: principal.organizationId,
    userId: principal.userId,
    name: input.name,
    keyHash: hashSecret(key),
    keyPrefix: key.slice(0, API_KEY_PREFIX.length + 6),
    scopes: [...new Set(input.scopes)],
    createdAt: toIso(now),
    expiresAt: toIso(addSeconds(now, (input.expiresInDays ?? deps.config.auth.api_key_default_days) * 86400)),
    revokedAt: null,
    lastUsedAt: null,
  };
  await withTransaction(deps.db, async (tx) => {
    await tx.insert(apiKeys).values(row);
    await recordAudit(tx, now, actor, {
      action: "api_key.create",
      targetType: "api_key",
      targetId: row.id,
      details: { name: row.name, scopes: row.scopes },
    });
  });
  return { ...toApiKeyView(row), key };
}

/** The calling user's API keys (admins see the whole organization's), newest first, never the key. */
export async function listApiKeys(
  deps: DomainDeps,
  principal: Principal,
  page: { page: number; pageSize: number },
) {
  const filter = hasScope(principal.scopes, "admin")
    ? eq(apiKeys.organizationId, principal.organizationId)
    : and(eq(apiKeys.organizationId, principal.organizationId), eq(apiKeys.userId, principal.userId));
  const { data: rows, total } = await selectNewestFirstPage(deps.db, apiKeys, filter, page);
  return { data: rows.map(toApiKeyView), total };
}

/** Revokes a key of the caller (or, for admins, of anyone in the organization); it stops working at once. */
export async function revokeApiKey(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  id: string,
): Promise<void> {
  assertSignedInUser(principal);
  const row = await firstRow(
    deps.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), eq(apiKeys.organizationId, principal.organizationId))),
  );
  if (!row || (row.userId !== principal.userId && !hasScope(principal.scopes, "admin")))
    throw new NotFoundError("API key");
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    await tx
      .update(apiKeys)
      .set({ revokedAt: toIso(now) })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
    await recordAudit(tx, now, actor, { action: "api_key.revoke", targetType: "api_key", targetId: id });
  });
}

/**
 * Keys are managed by signed-in users only: a key that could mint keys would outlive its own expiry and
 * revocation, and a narrow key could revoke its owner's other keys.
 */
function assertSignedInUser(principal: Principal): void {
  if (principal.kind === "api_key") {
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot manage API keys",
      "sign in as a user to create or revoke API keys",
    );
  }
}
