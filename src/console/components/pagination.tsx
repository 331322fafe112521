import { formatNumber } from "../lib/format";

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
