import { type Static, Type } from "@sinclair/typebox";
import { WIPE_STATUSES } from "../../db/schema/enums";
import type { wipes } from "../../db/tables";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";

type WipeRow = typeof wipes.$inferSelect;

const WipeStatusSchema = literalUnion(WIPE_STATUSES, {
  description: "timed_out: not confirmed within devices.wipe_timeout_seconds",
});

/** What the agent reported a wipe erased on the device, path by path, and whom it told. */
const WipeReportFields = {
  paths: Type.Array(
    Type.Object({
      path: Type.String({
        maxLength: 4096,
        description: "A work path as found on the device (/home/ann/Work)",
      }),
      outcome: Type.Union(
        [
          Type.Literal("erased"),
          Type.Literal("absent"),
          Type.Literal("not_followed"),
          Type.Literal("failed"),
        ],
        {
          description:
            "erased: emptied (a folder) or deleted (a file or link); absent: nothing there; " +
            "not_followed: reached through a symbolic link or not a folder, left alone; failed: see detail",
        },
      ),
      files: Type.Integer({ minimum: 0, description: "Files and links deleted" }),
      bytes: Type.Integer({ minimum: 0, description: "The size of the files deleted" }),
      folders: Type.Integer({ minimum: 0, description: "Folders removed inside it" }),
      detail: Type.Optional(Type.String({ maxLength: 500 })),
    }),
    {
      maxItems: 1000,
      description: "Each work path of the policy (each user's, for ~/ paths) and --work-dir",
    },
  ),
  files: Type.Integer({ minimum: 0, description: "Files and links deleted in all" }),
  bytes: Type.Integer({ minimum: 0 }),
  notification: Type.Object(
    {
      requested: Type.Boolean({ description: "The wipe asked for the user to be notified" }),
      sessions: Type.Integer({
        minimum: 0,
        description: "Logged-in sessions that were shown the notice",
      }),
      methods: Type.Array(Type.Union([Type.Literal("desktop"), Type.Literal("wall")]), {
        maxItems: 2,
        uniqueItems: true,
        description: "desktop: a notification on a graphical session's bus; wall: a message to terminals",
      }),
      detail: Type.Optional(Type.String({ maxLength: 500 })),
    },
    { description: "Whom the device told, never more than it did" },
  ),
};

export const WipeReportSchema = Type.Object(WipeReportFields, {
  title: "WipeReport",
  additionalProperties: false,
});

export type WipeReport = Static<typeof WipeReportSchema>;

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
    // The fields again, untitled: a titled schema in a nullable union would make its component nullable.
    report: Type.Union([Type.Object(WipeReportFields, { additionalProperties: false }), Type.Null()], {
      description:
        "What the agent reported erasing and whom it told; null until it answers, or from an agent that sent no report",
    }),
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
    report: (row.report as WipeReport | null) ?? null,
  };
}
