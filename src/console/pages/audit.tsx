import { api, unwrap } from "../api/client";
import type { PageProps } from "../app";
import {
  type ActorChoice,
  AuditFilterBar,
  hasAuditFilters,
  readAuditFilters,
  setAuditFilter,
} from "../components/admin-audit-filters";
import { AuditTable } from "../components/admin-audit-table";
import { EmptyState, ErrorNotice, Loading } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { Pagination } from "../components/pagination";
import { formatNumber } from "../lib/format";
import { setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

const PAGE_SIZE = 25;
/** The actor filter lists users when they fit one request (the API's largest page); beyond, it takes an id. */
const ACTOR_CHOICE_LIMIT = 100;

/** Every change and sign-in in the organization, newest first, filtered by action, actor, outcome and time. */
export function AuditPage(_: PageProps) {
  const mayListUsers = can(useStore(sessionStore), "users:read");
  const filters = readAuditFilters(useLocation().query);
  const filterKey = JSON.stringify(filters);
  const log = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/audit-logs", {
          params: {
            query: {
              page: filters.page,
              page_size: PAGE_SIZE,
              action: filters.action,
              actor_id: filters.actorId,
              outcome: filters.outcome,
              since: filters.since,
              until: filters.until,
            },
          },
        }),
      ),
    [filterKey],
  );
  // Names for the actor filter and for user targets; without users:read the filter takes an id instead.
  const users = useApi(
    () =>
      mayListUsers
        ? unwrap(api.GET("/api/v1/users", { params: { query: { page: 1, page_size: ACTOR_CHOICE_LIMIT } } }))
        : Promise.resolve(null),
    [mayListUsers],
  );
  const actors: ActorChoice[] | undefined =
    users.data && users.data.total <= ACTOR_CHOICE_LIMIT
      ? users.data.data.map((user) => ({ id: user.id, label: `${user.name} (${user.email})` }))
      : undefined;
  const names = new Map((users.data?.data ?? []).map((user) => [user.id, user.name]));

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every change and every sign-in attempt in this organization, newest first."
      />
      <AuditFilterBar filters={filters} actors={actors} />
      <ErrorNotice error={log.error} title="The audit log could not be loaded" />
      {log.data ? (
        log.data.total === 0 ? (
          hasAuditFilters(filters) ? (
            <EmptyState title="No entries match these filters">
              <p>Check the action's exact name, or widen the time range.</p>
              <button
                type="button"
                class="button-secondary"
                onClick={() =>
                  setAuditFilter({
                    action: undefined,
                    actor_id: undefined,
                    outcome: undefined,
                    since: undefined,
                    until: undefined,
                  })
                }
              >
                Clear filters
              </button>
            </EmptyState>
          ) : (
            <EmptyState title="Nothing recorded yet">
              <p>
                Sign-ins and changes to devices, policies, users and settings are listed here as they happen.
              </p>
            </EmptyState>
          )
        ) : log.data.data.length === 0 ? (
          <EmptyState title={`Page ${formatNumber(filters.page)} is past the end of the log`}>
            <button type="button" class="button-secondary" onClick={() => setQuery({ page: undefined })}>
              Go to the first page
            </button>
          </EmptyState>
        ) : (
          <>
            <p class="muted">
              {formatNumber(log.data.total)} {log.data.total === 1 ? "entry" : "entries"}
              {hasAuditFilters(filters) ? " match" : ""}
            </p>
            <AuditTable
              rows={log.data.data}
              names={names}
              caption={`Audit log, newest first, page ${formatNumber(filters.page)} of ${formatNumber(log.data.total_pages)}`}
              isLoading={log.isLoading}
            />
            <Pagination
              page={filters.page}
              pageSize={PAGE_SIZE}
              total={log.data.total}
              label="Audit log pages"
              onPage={(page) => setQuery({ page: page === 1 ? undefined : page })}
            />
          </>
        )
      ) : log.isLoading ? (
        <Loading label="Loading the audit log" />
      ) : null}
      <ErrorNotice error={users.error} title="The users for the actor filter could not be loaded" />
    </>
  );
}
