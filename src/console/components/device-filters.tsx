import { useEffect, useState } from "preact/hooks";
import { humanize } from "../lib/format";
import { setQuery } from "../lib/router";
import {
  COMPLIANCE_STATUSES,
  type ComplianceStatus,
  DEVICE_STATUSES,
  type DeviceStatus,
  oneOf,
  PLATFORMS,
  type Platform,
  platformLabel,
} from "./device-labels";
import { Field } from "./form";

export const PAGE_SIZES = ["25", "50"] as const;

/** The device list's filters and page, as the URL's query string holds them. */
export interface DeviceListFilters {
  q: string | undefined;
  status: DeviceStatus | undefined;
  platform: Platform | undefined;
  compliance: ComplianceStatus | undefined;
  page: number;
  pageSize: number;
}

/** The filters in the URL; values a hand-edited URL got wrong are ignored rather than sent. */
export function readDeviceListFilters(query: URLSearchParams): DeviceListFilters {
  const page = Number(query.get("page"));
  return {
    q: query.get("q")?.trim() || undefined,
    status: oneOf(DEVICE_STATUSES, query.get("status")),
    platform: oneOf(PLATFORMS, query.get("platform")),
    compliance: oneOf(COMPLIANCE_STATUSES, query.get("compliance")),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    pageSize: Number(oneOf(PAGE_SIZES, query.get("page_size")) ?? PAGE_SIZES[0]),
  };
}

export function hasDeviceListFilters(filters: DeviceListFilters): boolean {
  return Boolean(filters.q || filters.status || filters.platform || filters.compliance);
}

/** A filter changed: back to the first page, since the old page number may no longer exist. */
function setFilter(values: Record<string, string | undefined>): void {
  setQuery({ ...values, page: undefined });
}

/** How long typing pauses before the list is searched: one request per word, not per key. */
const SEARCH_DELAY_MS = 300;

/** Search by name (debounced) and the status, platform and compliance choices; all kept in the URL. */
export function DeviceFilters({ filters }: { filters: DeviceListFilters }) {
  const [text, setText] = useState(filters.q ?? "");
  // The URL changed by other means (Back, a link from the dashboard, "Clear filters"): follow it.
  useEffect(() => {
    if ((filters.q ?? "") !== text.trim()) setText(filters.q ?? "");
  }, [filters.q]);
  useEffect(() => {
    const wanted = text.trim() || undefined;
    if (wanted === filters.q) return;
    const timer = setTimeout(() => setFilter({ q: wanted }), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, filters.q]);

  return (
    <search aria-label="Filter devices">
      <form
        class="filters"
        onSubmit={(event) => {
          // Enter searches at once instead of waiting for the pause.
          event.preventDefault();
          if ((text.trim() || undefined) !== filters.q) setFilter({ q: text.trim() || undefined });
        }}
      >
        <Field label="Search by name">
          {(control) => (
            <input
              {...control}
              type="search"
              value={text}
              maxLength={200}
              autoComplete="off"
              onInput={(event) => setText(event.currentTarget.value)}
            />
          )}
        </Field>
        <Choice
          label="Status"
          allLabel="All statuses"
          value={filters.status}
          options={DEVICE_STATUSES.map((value) => [value, humanize(value)])}
          onChange={(status) => setFilter({ status })}
        />
        <Choice
          label="Platform"
          allLabel="All platforms"
          value={filters.platform}
          options={PLATFORMS.map((value) => [value, platformLabel(value)])}
          onChange={(platform) => setFilter({ platform })}
        />
        <Choice
          label="Compliance"
          allLabel="Any compliance"
          value={filters.compliance}
          options={COMPLIANCE_STATUSES.map((value) => [value, humanize(value)])}
          onChange={(compliance) => setFilter({ compliance })}
        />
        <Choice
          label="Rows per page"
          value={String(filters.pageSize)}
          options={PAGE_SIZES.map((value) => [value, value])}
          onChange={(size) => setFilter({ page_size: size === PAGE_SIZES[0] ? undefined : size })}
        />
        {hasDeviceListFilters(filters) ? (
          <button
            type="button"
            class="button-secondary"
            onClick={() =>
              setFilter({ q: undefined, status: undefined, platform: undefined, compliance: undefined })
            }
          >
            Clear filters
          </button>
        ) : null}
      </form>
    </search>
  );
}

/** A labelled select; `allLabel` is the option that sets no filter. */
function Choice({
  label,
  allLabel,
  value,
  options,
  onChange,
}: {
  label: string;
  allLabel?: string;
  value: string | undefined;
  options: [string, string][];
  onChange: (value: string | undefined) => void;
}) {
  return (
    <Field label={label}>
      {(control) => (
        <select
          {...control}
          value={value ?? ""}
          onChange={(event) => onChange(event.currentTarget.value || undefined)}
        >
          {allLabel ? <option value="">{allLabel}</option> : null}
          {options.map(([optionValue, optionLabel]) => (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
