import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ConfirmDialog } from "../components/dialog";
import { EmptyState, ErrorNotice, notify } from "../components/feedback";
import { ApiKeyCreated, ApiKeyForm, type CreatedApiKey } from "../components/integration-api-key-form";
import { PageHeader } from "../components/layout";
import { PagedList } from "../components/pagination";
import { RelativeTime } from "../components/relative-time";
import { StatusBadge } from "../components/status";
import { TableWrap } from "../components/table-wrap";
import { asApiError } from "../lib/api-errors";
import { setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type ApiKey = Schemas["ApiKey"];

const PAGE_SIZE = 20;

function pageOf(query: URLSearchParams): number {
  const page = Number(query.get("page"));
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** Revoked, expired, or active: only an active key is accepted. */
function KeyStateBadge({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.revoked_at) return <StatusBadge value="disabled" label="Revoked" />;
  if (new Date(apiKey.expires_at).getTime() <= Date.now())
    return <StatusBadge value="timed_out" label="Expired" />;
  return <StatusBadge value="active" />;
}

function isUsable(apiKey: ApiKey): boolean {
  return !apiKey.revoked_at && new Date(apiKey.expires_at).getTime() > Date.now();
}

/** Keys for scripts and integrations: create one (shown once), see when each was last used, revoke. */
export function ApiKeysPage(_: PageProps) {
  const session = useStore(sessionStore);
  const page = pageOf(useLocation().query);
  const list = useApi(
    () => unwrap(api.GET("/api/v1/auth/api-keys", { params: { query: { page, page_size: PAGE_SIZE } } })),
    [page],
  );
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const onCreated = (key: CreatedApiKey) => {
    setCreated(key);
    notify(`API key “${key.name}” created`);
    if (page === 1) list.reload();
    else setQuery({ page: undefined });
  };

  return (
    <>
      <PageHeader
        title="API keys"
        description={
          can(session, "admin")
            ? "Keys let scripts and integrations call the API, limited to the scopes chosen. As an administrator you see every key in the organization."
            : "Keys let scripts and integrations call the API as you, limited to the scopes you choose."
        }
      />
      <div class="card">
        {created ? (
          <ApiKeyCreated apiKey={created} onDone={() => setCreated(null)} />
        ) : (
          <ApiKeyForm session={session} onCreated={onCreated} />
        )}
      </div>
      <h2>Keys</h2>
      <ErrorNotice error={list.error} title="The API keys could not be loaded" />
      <PagedList
        list={list}
        page={page}
        pageSize={PAGE_SIZE}
        caption="API keys"
        pagesLabel="API key pages"
        loadingLabel="Loading API keys"
        empty={
          <EmptyState title="No API keys yet">
            <p>Create one above for each script or integration, so each can be revoked on its own.</p>
          </EmptyState>
        }
      >
        {(rows, tableCaption) => (
          <KeyTable rows={rows} caption={tableCaption} isLoading={list.isLoading} onRevoke={setRevoking} />
        )}
      </PagedList>
      <RevokeKeyDialog
        apiKey={revoking}
        onClose={() => setRevoking(null)}
        onRevoked={() => {
          setRevoking(null);
          list.reload();
        }}
      />
    </>
  );
}

function KeyTable({
  rows,
  caption,
  isLoading,
  onRevoke,
}: {
  rows: ApiKey[];
  caption: string;
  isLoading: boolean;
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    <TableWrap label={caption} isLoading={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.key_prefix}…</code>
              </td>
              <td>
                {key.scopes.map((scope, index) => (
                  <span key={scope}>
                    {index > 0 ? ", " : ""}
                    <code>{scope}</code>
                  </span>
                ))}
              </td>
              <td>
                <RelativeTime value={key.created_at} />
              </td>
              <td>
                <RelativeTime value={key.expires_at} />
              </td>
              <td>
                <RelativeTime value={key.last_used_at} />
              </td>
              <td>
                <KeyStateBadge apiKey={key} />
              </td>
              <td>
                {isUsable(key) ? (
                  <button
                    type="button"
                    class="button-secondary"
                    aria-label={`Revoke ${key.name}`}
                    onClick={() => onRevoke(key)}
                  >
                    Revoke…
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function RevokeKeyDialog({
  apiKey,
  onClose,
  onRevoked,
}: {
  apiKey: ApiKey | null;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const revoke = async () => {
    if (!apiKey) return;
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/auth/api-keys/{id}", { params: { path: { id: apiKey.id } } }));
      notify(`API key “${apiKey.name}” revoked`);
      onRevoked();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title="Revoke this API key?"
      open={apiKey !== null}
      confirmLabel="Revoke key"
      isDanger
      onConfirm={revoke}
      onClose={() => {
        setError(undefined);
        onClose();
      }}
    >
      {apiKey ? (
        <p>
          “{apiKey.name}” (<code>{apiKey.key_prefix}…</code>) stops working at once: every script using it
          gets 401 from then on. This can't be undone.
        </p>
      ) : null}
      <ErrorNotice error={error} title="The key could not be revoked" />
    </ConfirmDialog>
  );
}
