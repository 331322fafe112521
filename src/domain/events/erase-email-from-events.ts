import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { replaceEmailInJson } from "../../db/replace-email";

/**
 * An erased user's email in the organization's recorded events becomes `replacement`; deliveries still
 * queued send the changed data (a webhook already delivered cannot be called back).
 */
export function eraseEmailFromEvents(tx: DbOrTx, organizationId: string, email: string, replacement: string) {
  replaceEmailInJson(tx, "events", "data", sql`organization_id = ${organizationId}`, email, replacement);
}
