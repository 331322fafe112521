import { useEffect, useRef, useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import {
  type BulkOutcome,
  DeviceBulkBar,
  DeviceBulkResults,
  type SelectedDevice,
} from "../components/device-bulk";
import {
  DeviceFilters,
  type DeviceListFilters,
  hasDeviceListFilters,
  readDeviceListFilters,
} from "../components/device-filters";
import { countDevices, platformLabel } from "../components/device-labels";
import { EmptyState, ErrorNotice, Loading, notify } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { Pagination } from "../components/pagination";
import { RelativeTime } from "../components/relative-time";
import { StatusBadge } from "../components/status";
import { formatNumber } from "../lib/format";
import { Link, setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type DeviceRow = Schemas["DeviceListItem"];

/** The fleet, one server page at a time: search, filters, and actions on many devices at once. */
export function DevicesPage(_: PageProps) {
  const mayWrite = can(useStore(sessionStore), "devices:write");
  const filters = readDeviceListFilters(useLocation().query);
  const filterKey = JSON.stringify(filters);
  const list = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/devices", {
          params: {
            query: {
              page: filters.page,
              page_size: filters.pageSize,
              q: filters.q,
              status: filters.status,
              platform: filters.platform,
              compliance: filters.compliance,
            },
          },
        }),
      ),
    [filterKey],
  );
  // A selection belongs to the rows on screen: another page or filter starts a new one.
  const [selected, setSelected] = useState<SelectedDevice[]>([]);
  useEffect(() => setSelected([]), [filterKey]);
  const [outcome, setOutcome] = useState<BulkOutcome | null>(null);

  const onBulkDone = (done: BulkOutcome) => {
    setOutcome(done);
    setSelected([]);
    notify(
      `${countDevices(done.result.succeeded)} updated${done.result.failed ? `, ${done.result.failed} failed` : ""}`,
    );
    list.reload();
  };

  return (
    <>
      <PageHeader
        title="Devices"
        description={
          list.data
            ? `${countDevices(list.data.total)}${hasDeviceListFilters(filters) ? " match" : " enrolled"}`
            : undefined
        }
      >
        {mayWrite ? (
          <>
            <Link href="/enrollment-tokens" class="button">
              Enroll a device
            </Link>
            <Link href="/devices/add-phone" class="button button-secondary">
              Add a phone
            </Link>
          </>
        ) : null}
      </PageHeader>
      <DeviceFilters filters={filters} />
      {outcome ? <DeviceBulkResults outcome={outcome} onDismiss={() => setOutcome(null)} /> : null}
      {mayWrite ? (
        <DeviceBulkBar selected={selected} onClear={() => setSelected([])} onDone={onBulkDone} />
      ) : null}
      <ErrorNotice error={list.error} title="The devices could not be loaded" />
      {list.data ? (
        <DeviceListBody
          data={list.data}
          filters={filters}
          mayWrite={mayWrite}
          isLoading={list.isLoading}
          selected={selected}
          onSelect={setSelected}
        />
      ) : list.isLoading ? (
        <Loading label="Loading devices" />
      ) : null}
    </>
  );
}

function DeviceListBody({
  data,
  filters,
  mayWrite,
  isLoading,
  selected,
  onSelect,
}: {
  data: { data: DeviceRow[]; total: number };
  filters: DeviceListFilters;
  mayWrite: boolean;
  isLoading: boolean;
  selected: SelectedDevice[];
  onSelect: (selected: SelectedDevice[]) => void;
}) {
  if (data.total === 0 && !hasDeviceListFilters(filters)) return <NoDevices mayWrite={mayWrite} />;
  if (data.total === 0) {
    return (
      <EmptyState title="No devices match these filters">
        <p>Try part of the name only, or another status, platform or compliance.</p>
      </EmptyState>
    );
  }
  const pages = Math.ceil(data.total / filters.pageSize);
  return (
    <>
      {data.data.length === 0 ? (
        <EmptyState title={`Page ${formatNumber(filters.page)} is past the end of the list`}>
          <button type="button" class="button-secondary" onClick={() => setQuery({ page: undefined })}>
            Go to the first page
          </button>
        </EmptyState>
      ) : (
        <DeviceTable
          rows={data.data}
          caption={`Devices, page ${formatNumber(filters.page)} of ${formatNumber(pages)}`}
          mayWrite={mayWrite}
          isLoading={isLoading}
          selected={selected}
          onSelect={onSelect}
        />
      )}
      <Pagination
        page={filters.page}
        pageSize={filters.pageSize}
        total={data.total}
        label="Device pages"
        onPage={(page) => setQuery({ page: page === 1 ? undefined : page })}
      />
    </>
  );
}

/** The first visit: what a device list is for and how the first device gets here. */
function NoDevices({ mayWrite }: { mayWrite: boolean }) {
  return (
    <EmptyState title="No devices enrolled yet">
      <p>
        A computer joins Bulwark by enrolling with a token: create an enrollment token, then run the enroll
        command it shows on the device. It appears here as soon as it has enrolled. A phone is added here
        instead, without an agent: it gets a VPN profile or a QR code.
      </p>
      {mayWrite ? (
        <div class="button-row">
          <Link href="/enrollment-tokens" class="button">
            Create an enrollment token
          </Link>
          <Link href="/devices/add-phone" class="button button-secondary">
            Add a phone
          </Link>
        </div>
      ) : (
        <p>Ask an administrator or operator for an enrollment token.</p>
      )}
    </EmptyState>
  );
}

function DeviceTable({
  rows,
  caption,
  mayWrite,
  isLoading,
  selected,
  onSelect,
}: {
  rows: DeviceRow[];
  caption: string;
  mayWrite: boolean;
  isLoading: boolean;
  selected: SelectedDevice[];
  onSelect: (selected: SelectedDevice[]) => void;
}) {
  const selectedIds = new Set(selected.map((device) => device.id));
  const selectedHere = rows.filter((row) => selectedIds.has(row.id)).length;
  const isAllSelected = selectedHere === rows.length;
  const selectAll = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (selectAll.current) selectAll.current.indeterminate = selectedHere > 0 && !isAllSelected;
  });
  const toggle = (row: DeviceRow, isChecked: boolean) =>
    onSelect(
      isChecked
        ? [...selected, { id: row.id, name: row.device_name }]
        : selected.filter((device) => device.id !== row.id),
    );
  return (
    <div class="table-wrap" aria-busy={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {mayWrite ? (
              <th scope="col">
                <input
                  ref={selectAll}
                  type="checkbox"
                  aria-label="Select every device on this page"
                  checked={isAllSelected}
                  onChange={(event) =>
                    onSelect(
                      event.currentTarget.checked
                        ? rows.map((row) => ({ id: row.id, name: row.device_name }))
                        : [],
                    )
                  }
                />
              </th>
            ) : null}
            <th scope="col">Name</th>
            <th scope="col">Platform</th>
            <th scope="col">Status</th>
            <th scope="col">Compliance</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              {mayWrite ? (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${row.device_name}`}
                    checked={selectedIds.has(row.id)}
                    onChange={(event) => toggle(row, event.currentTarget.checked)}
                  />
                </td>
              ) : null}
              <td>
                <Link href={`/devices/${row.id}`}>{row.device_name}</Link>
              </td>
              <td>{platformLabel(row.platform)}</td>
              <td>
                <StatusBadge value={row.status} />
              </td>
              <td>
                <StatusBadge value={row.compliance_status} />
              </td>
              <td>
                <RelativeTime value={row.last_seen} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
