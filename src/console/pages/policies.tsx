import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { EmptyState, ErrorNotice, Loading } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { Pagination } from "../components/pagination";
import { PolicyDeletedNotice } from "../components/policy-actions";
import { PolicyTemplates } from "../components/policy-templates";
import { StatusBadge } from "../components/status";
import { formatDateTime, formatNumber } from "../lib/format";
import { Link, setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type PolicyRow = Schemas["PolicyListItem"];

const PAGE_SIZE = 20;

function policies(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? "policy" : "policies"}`;
}

/** The organization's policies one server page at a time, which one is the default, and the templates. */
export function PoliciesPage(_: PageProps) {
  const mayWrite = can(useStore(sessionStore), "policies:write");
  const requested = Number(useLocation().query.get("page"));
  const page = Number.isInteger(requested) && requested > 1 ? requested : 1;
  const list = useApi(
    () => unwrap(api.GET("/api/v1/policies", { params: { query: { page, page_size: PAGE_SIZE } } })),
    [page],
  );
  const defaultPolicy = useApi(() => unwrap(api.GET("/api/v1/policies/default")), []);
  const templates = useApi(() => unwrap(api.GET("/api/v1/policies/templates")), []);

  return (
    <>
      <PageHeader
        title="Policies"
        description={
          list.data
            ? `${policies(list.data.total)}: the settings pushed to devices for data loss prevention, network, USB and storage.`
            : "The settings pushed to devices: data loss prevention, network, USB and storage."
        }
      >
        {mayWrite ? (
          <Link href="/policies/new" class="button">
            New policy
          </Link>
        ) : null}
      </PageHeader>
      <PolicyDeletedNotice defaultPolicy={defaultPolicy.data} />
      <ErrorNotice error={defaultPolicy.error} title="The default policy could not be loaded" />
      {defaultPolicy.data ? (
        <p>
          <strong>Organization default:</strong>{" "}
          <Link href={`/policies/${defaultPolicy.data.id}`}>{defaultPolicy.data.name}</Link>, followed by
          every device without a policy of its own.
        </p>
      ) : null}
      <ErrorNotice error={list.error} title="The policies could not be loaded" />
      {list.data ? (
        <PolicyList
          rows={list.data.data}
          total={list.data.total}
          page={page}
          defaultId={defaultPolicy.data?.id}
          isLoading={list.isLoading}
          mayWrite={mayWrite}
        />
      ) : list.isLoading ? (
        <Loading label="Loading policies" />
      ) : null}
      <PolicyTemplates templates={templates} mayWrite={mayWrite} />
    </>
  );
}

function PolicyList({
  rows,
  total,
  page,
  defaultId,
  isLoading,
  mayWrite,
}: {
  rows: PolicyRow[];
  total: number;
  page: number;
  defaultId: string | undefined;
  isLoading: boolean;
  mayWrite: boolean;
}) {
  if (total === 0) {
    return (
      <EmptyState title="No policies yet">
        <p>
          {mayWrite
            ? "Create one with New policy, or start from one of the templates below."
            : "Ask an administrator or operator to create one."}
        </p>
      </EmptyState>
    );
  }
  const pages = Math.ceil(total / PAGE_SIZE);
  return (
    <>
      {rows.length === 0 ? (
        <EmptyState title={`Page ${formatNumber(page)} is past the end of the list`}>
          <button type="button" class="button-secondary" onClick={() => setQuery({ page: undefined })}>
            Go to the first page
          </button>
        </EmptyState>
      ) : (
        <div class="table-wrap" aria-busy={isLoading}>
          <table>
            <caption class="visually-hidden">
              Policies, page {formatNumber(page)} of {formatNumber(pages)}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="numeric">
                  Version
                </th>
                <th scope="col" class="numeric">
                  Devices
                </th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <Link href={`/policies/${row.id}`}>{row.name}</Link>
                    {row.is_default || row.id === defaultId ? (
                      <>
                        {" "}
                        <StatusBadge value="default" label="Default" />
                      </>
                    ) : null}
                    {row.description ? <p class="muted small">{row.description}</p> : null}
                  </td>
                  <td class="numeric">{row.version}</td>
                  <td class="numeric">{formatNumber(row.device_count)}</td>
                  <td>
                    <StatusBadge value={row.active ? "active" : "inactive"} />
                  </td>
                  <td>{formatDateTime(row.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pagination
        page={page}
        pageSize={PAGE_SIZE}
        total={total}
        label="Policy pages"
        onPage={(next) => setQuery({ page: next === 1 ? undefined : next })}
      />
    </>
  );
}
