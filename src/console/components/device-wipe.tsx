import { useEffect, useRef } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import { formatDateTime, humanize } from "../lib/format";
import { type Loaded, useApi } from "../lib/use-api";
import { ErrorNotice, Loading } from "./feedback";
import { RelativeTime } from "./relative-time";
import { StatusBadge } from "./status";

type Wipe = Schemas["Wipe"];
type WipeStatus = Wipe["status"];

/** How often a pending wipe is asked about: it ends at an agent's check-in, which nobody can hurry. */
const POLL_MS = 3000;

const STATUS_TEXT: Record<WipeStatus, string> = {
  pending: "Waiting for the device's agent to check in and confirm the wipe.",
  completed: "The agent confirmed that the work profile was erased.",
  failed: "The agent reported that the wipe failed.",
  timed_out: "The agent did not confirm the wipe in time. You can request another one.",
};

/**
 * A wipe's state, asked again every few seconds while pending, so pending -> completed / failed / timed
 * out shows without a reload; `onFinished` lets the page refresh the device (now wiped) and its log.
 */
export function useWipeProgress(
  deviceId: string,
  wipeId: string | null | undefined,
  onFinished: (status: WipeStatus) => void,
): Loaded<Wipe | undefined> {
  const wipe = useApi(
    () =>
      wipeId
        ? unwrap(
            api.GET("/api/v1/devices/{id}/wipe/{wipe_id}", {
              params: { path: { id: deviceId, wipe_id: wipeId } },
            }),
          )
        : Promise.resolve(undefined),
    [deviceId, wipeId],
  );
  const status = wipe.data?.status;
  const previous = useRef<WipeStatus | undefined>(undefined);
  useEffect(() => {
    if (previous.current === "pending" && status && status !== "pending") onFinished(status);
    previous.current = status;
  }, [status]);
  // Each answer (or failure) schedules the next question while the wipe is pending.
  useEffect(() => {
    if (status !== "pending") return;
    const timer = setTimeout(wipe.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [wipe.data, wipe.error, status]);
  return wipe;
}

/** The latest wipe: its state in words (announced when it changes), who asked, why, and when it ended. */
export function DeviceWipeProgress({ wipe }: { wipe: Loaded<Wipe | undefined> }) {
  const data = wipe.data;
  return (
    <section class="card" aria-labelledby="wipe-title">
      <h2 id="wipe-title">{data?.status === "pending" ? "Wipe in progress" : "Latest wipe"}</h2>
      <ErrorNotice error={wipe.error} title="The wipe's progress could not be loaded" />
      {data ? (
        <>
          <p role="status">
            <StatusBadge value={data.status} /> {STATUS_TEXT[data.status]}
          </p>
          <dl class="details">
            <dt>Requested</dt>
            <dd>
              {formatDateTime(data.initiated_at)} by {data.initiated_by}
            </dd>
            <dt>Reason</dt>
            <dd>{data.reason}</dd>
            <dt>User notified</dt>
            <dd>{data.notify_user ? "Yes" : "No"}</dd>
            {data.completed_at ? (
              <>
                <dt>{humanize(data.status)}</dt>
                <dd>
                  <RelativeTime value={data.completed_at} />
                </dd>
              </>
            ) : null}
            {data.error ? (
              <>
                <dt>Error</dt>
                <dd>{data.error}</dd>
              </>
            ) : null}
          </dl>
        </>
      ) : wipe.isLoading ? (
        <Loading label="Loading the wipe" />
      ) : null}
    </section>
  );
}
