import { type Static, Type } from "@sinclair/typebox";
import { WIPE_STATUSES } from "../../db/schema/enums";
import type { wipes } from "../../db/tables";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";

type WipeRow = typeof wipes.$inferSelect;

const WipeStatusSchema = literalUnion(WIPE_STATUSES, {
  description: "timed_out: not confirmed within devices.wipe_timeout_seconds",
});

export const WipeSchema = Type.Object(
  {
    wipe_id: Uuid,
    device_id: Uuid,
    status: WipeStatusSchema,
    reason: Type.String(),
    notify_user: Type.Boolean(),
    initiated_at: Timestamp,
    initiated_by: Type.String(),
    completed_at: Type.Union([Timestamp, Type.Null()], {
      description: "When the wipe completed, failed or timed out",
    }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "Wipe" },
);

export type WipeView = Static<typeof WipeSchema>;

/** The polling view of a wipe row. */
export function toWipeView(row: WipeRow): WipeView {
  return {
    wipe_id: row.id,
    device_id: row.deviceId,
    status: row.status,
    reason: row.reason,
    notify_user: row.notifyUser,
    initiated_at: row.initiatedAt,
    initiated_by: row.initiatedBy,
    completed_at: row.completedAt,
    error: row.error,
  };
}
