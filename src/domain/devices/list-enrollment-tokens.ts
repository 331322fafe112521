import { eq } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { enrollmentTokens } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { type EnrollmentTokenView, toView } from "./enrollment-token-view";

/** The organization's enrollment tokens, newest first, without their values. */
export async function listEnrollmentTokens(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
): Promise<{ data: EnrollmentTokenView[]; total: number }> {
  const now = deps.clock.now();
  const filter = eq(enrollmentTokens.organizationId, organizationId);
  const { data: rows, total } = await selectNewestFirstPage(deps.db, enrollmentTokens, filter, page);
  return { data: rows.map((row) => toView(row, now)), total };
}
