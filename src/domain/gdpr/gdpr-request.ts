import { type Static, Type } from "@sinclair/typebox";
import { and, eq, type SQL } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { selectNewestFirstPage } from "../../db/paged-query";
import { ACTOR_TYPES, GDPR_REQUEST_STATUSES, GDPR_REQUEST_TYPES } from "../../db/schema/enums";
import { gdprRequests } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import { hasScope } from "../auth/scopes";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, NotFoundError } from "../errors";
import { recordEvent } from "../events/record-event";
import { gdprSubjectId } from "./gdpr-subject";

export type GdprRequestType = (typeof GDPR_REQUEST_TYPES)[number];
export type GdprRequestStatus = (typeof GDPR_REQUEST_STATUSES)[number];

export const GdprRequestTypeSchema = literalUnion(GDPR_REQUEST_TYPES, {
  description:
    "export (access and portability), erasure, restriction (of processing) or objection (to processing)",
});

export const GdprRequestStatusSchema = literalUnion(GDPR_REQUEST_STATUSES, {
  description:
    "completed: Bulwark did all of it; needs_review: recorded, and an operator has to act (an objection " +
    "to processing Bulwark does not do itself); rejected: refused, `result` says why",
});

/** A data-protection request as GET /gdpr/requests and the four GDPR endpoints show it. */
export const GdprRequestSchema = Type.Object(
  {
    id: Uuid,
    type: GdprRequestTypeSchema,
    status: GdprRequestStatusSchema,
    user_id: Type.String({ format: "uuid", description: "The person the request is about" }),
    requested_by: Type.Object(
      {
        type: literalUnion(ACTOR_TYPES, { description: "user, or api_key for automation" }),
        id: Type.Union([Type.String(), Type.Null()], { description: "The user's or the API key's id" }),
      },
      { description: "Who made the request: the person, or an admin acting for them" },
    ),
    processing: Type.Union([Type.String(), Type.Null()], {
      description: "Objections: the processing objected to",
    }),
    reason: Type.Union([Type.String(), Type.Null()], {
      description: "Objections: the person's grounds (removed if they are later erased)",
    }),
    result: Type.String({ description: "What Bulwark did, or why it refused" }),
    details: Type.Record(Type.String(), Type.Integer(), {
      description:
        "Counts of what changed, e.g. sessions_revoked, api_keys_revoked, devices_unassigned, log_entries_reduced",
    }),
    created_at: Timestamp,
    completed_at: Timestamp,
  },
  { title: "GdprRequest" },
);

export type GdprRequestView = Static<typeof GdprRequestSchema>;
type GdprRequestRow = typeof gdprRequests.$inferSelect;

export function toGdprRequestView(row: GdprRequestRow): GdprRequestView {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    user_id: row.userId,
    requested_by: { type: row.requestedByType, id: row.requestedById },
    processing: row.processing,
    reason: row.reason,
    result: row.result,
    details: row.details,
    created_at: row.createdAt,
    completed_at: row.completedAt,
  };
}

export interface GdprOutcome {
  organizationId: string;
  userId: string;
  type: GdprRequestType;
  status: GdprRequestStatus;
  result: string;
  details?: Record<string, number>;
  processing?: string;
  reason?: string;
}

/**
 * Records an answered request in the caller's transaction: the request row, its audit entry (a failure
 * when rejected) and the `gdpr.request_completed` event for webhooks.
 */
export async function recordGdprRequest(
  tx: DbOrTx,
  now: Date,
  actor: Actor,
  outcome: GdprOutcome,
): Promise<GdprRequestView> {
  const timestamp = toIso(now);
  const row: GdprRequestRow = {
    id: newId(),
    organizationId: outcome.organizationId,
    userId: outcome.userId,
    type: outcome.type,
    status: outcome.status,
    requestedByType: actor.type,
    requestedById: actor.id,
    processing: outcome.processing ?? null,
    reason: outcome.reason ?? null,
    result: outcome.result,
    details: outcome.details ?? {},
    createdAt: timestamp,
    completedAt: timestamp,
  };
  await tx.insert(gdprRequests).values(row);
  await recordAudit(tx, now, actor, {
    action: `gdpr.${outcome.type}`,
    outcome: outcome.status === "rejected" ? "failure" : "success",
    targetType: "user",
    targetId: outcome.userId,
    organizationId: outcome.organizationId,
    details: {
      request_id: row.id,
      status: row.status,
      ...(row.processing ? { processing: row.processing } : {}),
      ...row.details,
    },
  });
  await announceAnswer(tx, now, row);
  return toGdprRequestView(row);
}

/** An erased person's own words (objection grounds) go; the requests themselves stay on record. */
export async function forgetRequestReasons(tx: DbOrTx, userId: string): Promise<void> {
  await tx.update(gdprRequests).set({ reason: null }).where(eq(gdprRequests.userId, userId));
}

/** The gdpr.request_completed event of an answered request: ids, type and status, no personal data. */
async function announceAnswer(tx: DbOrTx, now: Date, row: GdprRequestRow): Promise<void> {
  await recordEvent(tx, now, row.organizationId, "gdpr.request_completed", {
    request_id: row.id,
    type: row.type,
    status: row.status,
    user_id: row.userId,
    processing: row.processing,
    completed_at: row.completedAt,
  });
}

/** Every request about one person, oldest first (for their export). */
export async function gdprRequestsAbout(
  db: DbOrTx,
  organizationId: string,
  userId: string,
): Promise<GdprRequestView[]> {
  return (
    await db
      .select()
      .from(gdprRequests)
      .where(and(eq(gdprRequests.organizationId, organizationId), eq(gdprRequests.userId, userId)))
      .orderBy(gdprRequests.createdAt, gdprRequests.id)
  ).map(toGdprRequestView);
}

/**
 * The caller's own requests, newest first; an admin sees the whole organization's, or one person's with
 * `userId` (which, for anyone else, must be their own: see gdprSubjectId).
 */
export async function listGdprRequests(
  deps: DomainDeps,
  principal: Principal,
  filter: { userId?: string; type?: GdprRequestType },
  page: { page: number; pageSize: number },
): Promise<{ data: GdprRequestView[]; total: number }> {
  const subjectId = gdprSubjectId(principal, filter.userId);
  const isWholeOrganization = filter.userId === undefined && hasScope(principal.scopes, "admin");
  const conditions: SQL[] = [eq(gdprRequests.organizationId, principal.organizationId)];
  if (!isWholeOrganization) conditions.push(eq(gdprRequests.userId, subjectId));
  if (filter.type) conditions.push(eq(gdprRequests.type, filter.type));
  const { data, total } = await selectNewestFirstPage(deps.db, gdprRequests, and(...conditions), page);
  return { data: data.map(toGdprRequestView), total };
}

/**
 * Answers a request Bulwark could not answer by itself (an objection to processing it does not do):
 * an admin records what was done, or why it was refused. Audited, and sent to webhooks again as
 * gdpr.request_completed with the new status. Only needs_review requests can be answered (409).
 */
export async function resolveGdprRequest(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  id: string,
  input: { status: "completed" | "rejected"; result: string },
): Promise<GdprRequestView> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await firstRow(
      tx
        .select()
        .from(gdprRequests)
        .where(and(eq(gdprRequests.id, id), eq(gdprRequests.organizationId, principal.organizationId))),
    );
    if (!row) throw new NotFoundError("data-protection request");
    if (row.status !== "needs_review")
      throw new ConflictError(
        "gdpr_request_not_open",
        "request already answered",
        `this request is ${row.status}; only needs_review requests are answered by hand`,
      );
    const timestamp = toIso(now);
    const answered = { ...row, status: input.status, result: input.result, completedAt: timestamp };
    await tx
      .update(gdprRequests)
      .set({ status: answered.status, result: answered.result, completedAt: timestamp })
      .where(eq(gdprRequests.id, id));
    await recordAudit(tx, now, actor, {
      action: "gdpr.request_resolve",
      targetType: "user",
      targetId: row.userId,
      details: { request_id: id, status: input.status },
    });
    await announceAnswer(tx, now, answered);
    return toGdprRequestView(answered);
  });
}
