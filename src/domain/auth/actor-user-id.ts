import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { apiKeys } from "../../db/tables";
import type { Actor } from "../deps";

/** The user behind an actor: the user itself, or an API key's creator; null for devices and the system. */
export async function actorUserId(db: DbOrTx, actor: Actor): Promise<string | null> {
  if (actor.type === "user") return actor.id;
  if (actor.type !== "api_key" || !actor.id) return null;
  return (
    (await firstRow(db.select({ userId: apiKeys.userId }).from(apiKeys).where(eq(apiKeys.id, actor.id))))
      ?.userId ?? null
  );
}
