import { and, eq, isNull } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { users } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { findLiveUser, toUserView, type UserView } from "./user-view";

export async function listUsers(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
) {
  const filter = and(eq(users.organizationId, organizationId), isNull(users.deletedAt));
  const { data: rows, total } = await selectNewestFirstPage(deps.db, users, filter, page);
  return { data: rows.map(toUserView), total };
}

export async function getUser(deps: DomainDeps, organizationId: string, id: string): Promise<UserView> {
  return toUserView(await findLiveUser(deps.db, organizationId, id));
}
