import type { ComponentChildren } from "preact";
import { formatNumber } from "../lib/format";
import { setQuery } from "../lib/router";
import type { Loaded } from "../lib/use-api";
import { Loading } from "./feedback";

/** "1–20 of 100,000" and previous/next/first/last; the server pages, the browser never holds the whole list. */
export function Pagination({
  page,
  pageSize,
  total,
  onPage,
  label = "Pages",
}: {
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
  label?: string;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  return (
    <nav class="pagination" aria-label={label}>
      <p aria-live="polite">
        {formatNumber(first)}–{formatNumber(last)} of {formatNumber(total)}
      </p>
      <div class="button-row">
        <button type="button" class="button-secondary" disabled={page <= 1} onClick={() => onPage(1)}>
          First
        </button>
        <button type="button" class="button-secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
          Previous
        </button>
        <span class="page-number">
          Page {formatNumber(page)} of {formatNumber(pages)}
        </span>
        <button
          type="button"
          class="button-secondary"
          disabled={page >= pages}
          onClick={() => onPage(page + 1)}
        >
          Next
        </button>
        <button type="button" class="button-secondary" disabled={page >= pages} onClick={() => onPage(pages)}>
          Last
        </button>
      </div>
    </nav>
  );
}

/** One page of a list as the API answers it. */
interface ListPage<Row> {
  data: Row[];
  total: number;
  total_pages: number;
}

/**
 * A server-paged list whose page is in the URL (`?page=`): a loading notice before the first answer,
 * `empty` when nothing matches, else the page's table (given its caption, "API keys, page 2 of 5") and
 * the pages.
 */
export function PagedList<Row>({
  list,
  page,
  pageSize,
  caption,
  pagesLabel,
  loadingLabel,
  empty,
  children,
}: {
  list: Loaded<ListPage<Row>>;
  page: number;
  pageSize: number;
  /** What the table lists ("API keys"), the start of its caption. */
  caption: string;
  pagesLabel: string;
  loadingLabel: string;
  empty: ComponentChildren;
  children: (rows: Row[], caption: string) => ComponentChildren;
}) {
  if (!list.data) return list.isLoading ? <Loading label={loadingLabel} /> : null;
  if (list.data.total === 0) return <>{empty}</>;
  return (
    <>
      {children(
        list.data.data,
        `${caption}, page ${formatNumber(page)} of ${formatNumber(list.data.total_pages)}`,
      )}
      <Pagination
        page={page}
        pageSize={pageSize}
        total={list.data.total}
        label={pagesLabel}
        onPage={(next) => setQuery({ page: next === 1 ? undefined : next })}
      />
    </>
  );
}
