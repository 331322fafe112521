import { api, type Schemas, unwrap } from "../api/client";
import { formatNumber } from "../lib/format";
import { setQuery, useLocation } from "../lib/router";
import { useApi } from "../lib/use-api";
import { EmptyState, ErrorNotice } from "./feedback";
import { Field } from "./form";
import { DeliveryStatusBadge, shortId } from "./integration-labels";
import { PagedList } from "./pagination";
import { RelativeTime } from "./relative-time";
import { TableWrap } from "./table-wrap";

type Delivery = Schemas["WebhookDelivery"];
type DeliveryStatus = Delivery["status"];

const PAGE_SIZE = 20;
const STATUSES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed"];

/** The page and outcome filter of the deliveries table, from the query string (so a link shows the same rows). */
function readFilters(query: URLSearchParams): { page: number; status: DeliveryStatus | undefined } {
  const page = Number(query.get("page"));
  const status = STATUSES.find((item) => item === query.get("status"));
  return { page: Number.isInteger(page) && page > 0 ? page : 1, status };
}

/** "120 ms", "1.4 s". */
function formatDuration(milliseconds: number | null): string {
  if (milliseconds === null) return "—";
  return milliseconds < 1000 ? `${formatNumber(milliseconds)} ms` : `${(milliseconds / 1000).toFixed(1)} s`;
}

/**
 * A subscription's deliveries, newest event first, a server page at a time: outcome, attempts, the
 * last attempt's HTTP status, duration and error. `refreshKey` changes when the page knows there is
 * something new (a test event was just queued).
 */
export function WebhookDeliveries({ webhookId, refreshKey }: { webhookId: string; refreshKey: number }) {
  const { page, status } = readFilters(useLocation().query);
  const list = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/webhooks/{id}/deliveries", {
          params: { path: { id: webhookId }, query: { page, page_size: PAGE_SIZE, status } },
        }),
      ),
    [webhookId, page, status, refreshKey],
  );
  return (
    <section aria-labelledby="deliveries" class="card">
      <h2 id="deliveries">Deliveries</h2>
      <div class="filters">
        <Field label="Outcome">
          {(control) => (
            <select
              {...control}
              value={status ?? ""}
              onChange={(event) => setQuery({ status: event.currentTarget.value, page: undefined })}
            >
              <option value="">Any</option>
              <option value="pending">Pending (a retry is due)</option>
              <option value="succeeded">Succeeded</option>
              <option value="failed">Failed (out of retries)</option>
            </select>
          )}
        </Field>
        <button type="button" class="button-secondary" disabled={list.isLoading} onClick={list.reload}>
          {list.isLoading && list.data ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      <ErrorNotice error={list.error} title="The deliveries could not be loaded" />
      <PagedList
        list={list}
        page={page}
        pageSize={PAGE_SIZE}
        caption="Deliveries"
        pagesLabel="Delivery pages"
        loadingLabel="Loading deliveries"
        empty={
          <EmptyState title={status ? "No deliveries with this outcome" : "No deliveries yet"}>
            <p>
              {status
                ? "Choose another outcome, or Any."
                : "Send a test event, or wait for the next event it subscribes to; then Refresh."}
            </p>
          </EmptyState>
        }
      >
        {(rows, tableCaption) => (
          <DeliveryTable rows={rows} caption={tableCaption} isLoading={list.isLoading} />
        )}
      </PagedList>
    </section>
  );
}

function DeliveryTable({
  rows,
  caption,
  isLoading,
}: {
  rows: Delivery[];
  caption: string;
  isLoading: boolean;
}) {
  return (
    <TableWrap label={caption} isLoading={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="numeric">
              Attempts
            </th>
            <th scope="col" class="numeric">
              HTTP status
            </th>
            <th scope="col" class="numeric">
              Duration
            </th>
            <th scope="col">Error</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((delivery) => (
            <tr key={delivery.id}>
              <td>
                <code>{delivery.event}</code>
                <br />
                <span class="muted small" title={delivery.event_id}>
                  event {shortId(delivery.event_id)}
                </span>
              </td>
              <td>
                <DeliveryStatusBadge status={delivery.status} />
                {delivery.status === "pending" && delivery.next_attempt_at ? (
                  <p class="muted small">
                    next try <RelativeTime value={delivery.next_attempt_at} />
                  </p>
                ) : null}
              </td>
              <td class="numeric">{formatNumber(delivery.attempts)}</td>
              <td class="numeric">{delivery.last_status_code ?? "—"}</td>
              <td class="numeric">{formatDuration(delivery.last_duration_ms)}</td>
              <td>{delivery.last_error ? <span class="small">{delivery.last_error}</span> : "—"}</td>
              <td>
                <RelativeTime
                  value={
                    delivery.completed_at ?? delivery.attempts_log.at(-1)?.started_at ?? delivery.created_at
                  }
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
