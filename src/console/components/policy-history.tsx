import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client";
import { formatDateTime } from "../lib/format";
import { setQuery } from "../lib/router";
import { useApi } from "../lib/use-api";
import { Dialog } from "./dialog";
import { EmptyState, ErrorNotice, Loading } from "./feedback";
import { Pagination } from "./pagination";
import { PolicySettingsView, SETTINGS_BY_PATH } from "./policy-settings";

const PAGE_SIZE = 20;

type ParsedChange =
  | { kind: "created" }
  | { kind: "changed"; path: string; before: string; after: string }
  | { kind: "added" | "removed"; path: string; item: string }
  | { kind: "reordered"; path: string }
  | { kind: "other"; text: string };

function isJsonValue(text: string): boolean {
  if (text === "(unset)") return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a history line as the server writes it: "created", "path: old -> new" (JSON values),
 * "path: added X", "path: removed X" or "path: reordered". A value may itself contain " -> ", so the
 * split is the first one whose left side is a whole JSON value.
 */
function parseChange(line: string): ParsedChange {
  if (line === "created") return { kind: "created" };
  const colon = line.indexOf(": ");
  if (colon === -1) return { kind: "other", text: line };
  const path = line.slice(0, colon);
  const rest = line.slice(colon + 2);
  if (rest === "reordered") return { kind: "reordered", path };
  if (rest.startsWith("added ")) return { kind: "added", path, item: rest.slice(6) };
  if (rest.startsWith("removed ")) return { kind: "removed", path, item: rest.slice(8) };
  let arrow = rest.indexOf(" -> ");
  while (arrow !== -1) {
    const before = rest.slice(0, arrow);
    if (isJsonValue(before)) return { kind: "changed", path, before, after: rest.slice(arrow + 4) };
    arrow = rest.indexOf(" -> ", arrow + 1);
  }
  return { kind: "other", text: line };
}

/** A JSON value from a history line as people read it: strings without their JSON escapes. */
function readable(value: string): string {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "string" ? `“${parsed}”` : value;
  } catch {
    return value;
  }
}

function settingName(path: string): string {
  if (path === "name") return "Name";
  if (path === "description") return "Description";
  return SETTINGS_BY_PATH.get(path)?.label ?? path;
}

/** One change in words: the setting's name and path, then old → new, or what was added or removed. */
function ChangeLine({ line }: { line: string }) {
  const change = parseChange(line);
  if (change.kind === "created") return <li class="diff-line">Created</li>;
  if (change.kind === "other") return <li class="diff-line">{change.text}</li>;
  const name = (
    <>
      <strong>{settingName(change.path)}</strong> <span class="muted">({change.path})</span>:{" "}
    </>
  );
  if (change.kind === "reordered") {
    return (
      <li class="diff-line">
        {name}
        reordered
      </li>
    );
  }
  if (change.kind === "changed") {
    return (
      <li class="diff-line">
        {name}
        <code>{readable(change.before)}</code> → <code>{readable(change.after)}</code>
      </li>
    );
  }
  return (
    <li class="diff-line">
      {name}
      <span aria-hidden="true">{change.kind === "added" ? "+ " : "− "}</span>
      {change.kind} <code>{readable(change.item)}</code>
    </li>
  );
}

/** A policy's versions, newest first, each with what it changed and a way to see its whole document. */
export function PolicyHistory({
  policyId,
  currentVersion,
  page,
}: {
  policyId: string;
  /** Reloads the list when the policy gets a new version. */
  currentVersion: number;
  page: number;
}) {
  const history = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/policies/{id}/history", {
          params: { path: { id: policyId }, query: { page, page_size: PAGE_SIZE } },
        }),
      ),
    [policyId, currentVersion, page],
  );
  const [shownVersion, setShownVersion] = useState<number | null>(null);
  const data = history.data;
  return (
    <>
      <ErrorNotice error={history.error} title="The history could not be loaded" />
      {!data ? (
        history.isLoading ? (
          <Loading label="Loading the history" />
        ) : null
      ) : data.data.length === 0 ? (
        <EmptyState title={`Page ${page} is past the end of the history`}>
          <button
            type="button"
            class="button-secondary"
            onClick={() => setQuery({ history_page: undefined })}
          >
            Go to the newest versions
          </button>
        </EmptyState>
      ) : (
        <>
          <div aria-busy={history.isLoading}>
            {data.data.map((entry) => (
              <article key={entry.version} class="card" aria-labelledby={`version-${entry.version}`}>
                <h3 id={`version-${entry.version}`}>
                  Version {entry.version}
                  {entry.version === currentVersion ? " (current)" : ""}
                </h3>
                <p class="muted small">
                  By {entry.changed_by},{" "}
                  <time dateTime={entry.changed_at}>{formatDateTime(entry.changed_at)}</time>
                </p>
                <ul aria-label={`Changes in version ${entry.version}`}>
                  {entry.changes.map((line) => (
                    <ChangeLine key={line} line={line} />
                  ))}
                </ul>
                <button type="button" class="button-link" onClick={() => setShownVersion(entry.version)}>
                  View version {entry.version}
                </button>
              </article>
            ))}
          </div>
          {data.total > PAGE_SIZE ? (
            <Pagination
              page={page}
              pageSize={PAGE_SIZE}
              total={data.total}
              label="History pages"
              onPage={(next) => setQuery({ history_page: next === 1 ? undefined : next })}
            />
          ) : null}
        </>
      )}
      <PolicyVersionDialog policyId={policyId} version={shownVersion} onClose={() => setShownVersion(null)} />
    </>
  );
}

/** The whole document of one version, as it was saved (GET /policies/:id/versions/:version). */
function PolicyVersionDialog({
  policyId,
  version,
  onClose,
}: {
  policyId: string;
  version: number | null;
  onClose: () => void;
}) {
  return (
    <Dialog title={version === null ? "" : `Version ${version}`} open={version !== null} onClose={onClose}>
      {version !== null ? <PolicyVersionBody policyId={policyId} version={version} /> : null}
      <div class="button-row dialog-actions">
        <button type="button" class="button-secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

function PolicyVersionBody({ policyId, version }: { policyId: string; version: number }) {
  const loaded = useApi(
    () =>
      unwrap(
        api.GET("/api/v1/policies/{id}/versions/{version}", {
          params: { path: { id: policyId, version: String(version) } },
        }),
      ),
    [policyId, version],
  );
  const data = loaded.data;
  if (!data) {
    return (
      <>
        <ErrorNotice error={loaded.error} title="This version could not be loaded" />
        {loaded.isLoading ? <Loading label={`Loading version ${version}`} /> : null}
      </>
    );
  }
  return (
    <div class="stack">
      <dl class="details">
        <dt>Name</dt>
        <dd>{data.name}</dd>
        <dt>Description</dt>
        <dd>{data.description || <span class="muted">None</span>}</dd>
        <dt>Saved by</dt>
        <dd>{data.changed_by}</dd>
        <dt>Saved</dt>
        <dd>{formatDateTime(data.changed_at)}</dd>
      </dl>
      <PolicySettingsView data={data.policy_data} />
    </div>
  );
}
