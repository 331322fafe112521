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
  completed: "The agent confirmed the wipe; what it erased is below, as it reported it.",
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

/** Whom the wipe told: asked for or not, then what the agent reported, never more. */
function notificationText(wipe: Wipe): string {
  if (!wipe.notify_user) return "Not asked for";
  const told = wipe.report?.notification;
  if (!told)
    return wipe.status === "pending"
      ? "Asked for; the agent tells the people logged in first"
      : "Asked for; the agent reported nothing";
  const methods = told.methods.length > 0 ? ` (${told.methods.join(" and ")})` : "";
  const sessions = `${told.sessions} logged-in session${told.sessions === 1 ? "" : "s"} shown the notice${methods}`;
  return told.detail ? `${sessions}: ${told.detail}` : sessions;
}

const OUTCOME_TEXT: Record<NonNullable<Wipe["report"]>["paths"][number]["outcome"], string> = {
  erased: "Erased",
  absent: "Not there",
  not_followed: "Not followed",
  failed: "Failed",
};

/** Each work path as the agent found it, with what it erased there. */
function ErasedPaths({ report }: { report: NonNullable<Wipe["report"]> }) {
  return (
    <>
      <h3>What the agent erased</h3>
      <p>
        {report.files} file{report.files === 1 ? "" : "s"} ({formatBytes(report.bytes)}) in{" "}
        {report.paths.filter((path) => path.outcome === "erased").length} of {report.paths.length} work path
        {report.paths.length === 1 ? "" : "s"}
        {report.paths.length === 0 ? ": the policy names no work paths (wipe.work_paths)" : ""}.
      </p>
      {report.paths.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Path on the device</th>
              <th scope="col">Outcome</th>
              <th scope="col">Files</th>
              <th scope="col">Size</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {report.paths.map((path) => (
              <tr key={path.path}>
                <td>
                  <code>{path.path}</code>
                </td>
                <td>{OUTCOME_TEXT[path.outcome]}</td>
                <td>{path.files}</td>
                <td>{formatBytes(path.bytes)}</td>
                <td>{path.detail ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
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
            <dt>User notification</dt>
            <dd>{notificationText(data)}</dd>
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
          {data.report ? <ErasedPaths report={data.report} /> : null}
        </>
      ) : wipe.isLoading ? (
        <Loading label="Loading the wipe" />
      ) : null}
    </section>
  );
}
