import { api, unwrap } from "../api/client";
import { formatDateTime, formatNumber, formatRelative } from "../lib/format";
import { Link, setQuery } from "../lib/router";
import { useApi } from "../lib/use-api";
import { EmptyState, ErrorNotice, Loading } from "./feedback";
import { Pagination } from "./pagination";
import { StatusBadge } from "./status";

const PAGE_SIZE = 20;

/** The devices that follow a policy, one server page at a time, and which version each has applied. */
export function PolicyDevices({
  policyId,
  currentVersion,
  isDefault,
  page,
}: {
  policyId: string;
  currentVersion: number;
  isDefault: boolean;
  page: number;
}) {
  const devices = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/policies/{id}/devices", {
          params: { path: { id: policyId }, query: { page, page_size: PAGE_SIZE } },
        }),
      ),
    [policyId, currentVersion, page],
  );
  const data = devices.data;
  if (!data) {
    return (
      <>
        <ErrorNotice error={devices.error} title="The devices could not be loaded" />
        {devices.isLoading ? <Loading label="Loading the devices" /> : null}
      </>
    );
  }
  if (data.total === 0) {
    return (
      <EmptyState title="No devices follow this policy">
        <p>
          {isDefault
            ? "As the organization default, it is followed by every device without a policy of its own; none has enrolled yet."
            : "Give it to devices from the Devices page (select them, then Assign policy) or from a device's page."}
        </p>
        <Link href="/devices">Go to the devices</Link>
      </EmptyState>
    );
  }
  const pages = Math.ceil(data.total / PAGE_SIZE);
  return (
    <>
      <ErrorNotice error={devices.error} title="The devices could not be refreshed" />
      {data.data.length === 0 ? (
        <EmptyState title={`Page ${formatNumber(page)} is past the end of the list`}>
          <button
            type="button"
            class="button-secondary"
            onClick={() => setQuery({ devices_page: undefined })}
          >
            Go to the first page
          </button>
        </EmptyState>
      ) : (
        <div class="table-wrap" aria-busy={devices.isLoading}>
          <table>
            <caption class="visually-hidden">
              Devices following this policy, page {formatNumber(page)} of {formatNumber(pages)}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Policy version applied</th>
                <th scope="col">Last sync</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((device) => (
                <tr key={device.id}>
                  <td>
                    <Link href={`/devices/${device.id}`}>{device.device_name}</Link>
                  </td>
                  <td>
                    <StatusBadge value={device.status} />
                  </td>
                  <td>
                    {device.policy_version === null
                      ? "Not yet"
                      : device.policy_version < currentVersion
                        ? `${device.policy_version} (behind: current is ${currentVersion})`
                        : `${device.policy_version} (current)`}
                  </td>
                  <td>
                    {device.last_sync ? (
                      <time dateTime={device.last_sync} title={formatDateTime(device.last_sync)}>
                        {formatRelative(device.last_sync)}
                      </time>
                    ) : (
                      <span class="muted">Never</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pagination
        page={page}
        pageSize={PAGE_SIZE}
        total={data.total}
        label="Device pages"
        onPage={(next) => setQuery({ devices_page: next === 1 ? undefined : next })}
      />
    </>
  );
}
