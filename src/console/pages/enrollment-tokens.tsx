import { useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ConfirmDialog } from "../components/dialog";
import { EmptyState, ErrorNotice, notify } from "../components/feedback";
import { type EnrollmentChoices, useEnrollmentChoices } from "../components/integration-choices";
import {
  type CreatedToken,
  EnrollmentTokenCreated,
  EnrollmentTokenForm,
  ownerNames,
} from "../components/integration-enrollment-form";
import { shortId, TokenStateBadge } from "../components/integration-labels";
import { PageHeader } from "../components/layout";
import { PagedList } from "../components/pagination";
import { RelativeTime } from "../components/relative-time";
import { TableWrap } from "../components/table-wrap";
import { asApiError } from "../lib/api-errors";
import { formatDateTime, formatNumber } from "../lib/format";
import { Link, setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type Token = Schemas["EnrollmentToken"];

const PAGE_SIZE = 20;

/** A positive whole page number from the query string, else 1. */
function pageOf(query: URLSearchParams): number {
  const page = Number(query.get("page"));
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** "Created Nov 23, 2026, 9:41 PM (a1b2c3d4)": tokens have no name, so this is how the page refers to one. */
function describeToken(token: Token): string {
  return `the token created ${formatDateTime(token.created_at)} (${shortId(token.id)})`;
}

/** Tokens that let a device join the organization: create one (shown once, with the enroll command), revoke. */
export function EnrollmentTokensPage(_: PageProps) {
  const mayWrite = can(useStore(sessionStore), "devices:write");
  const page = pageOf(useLocation().query);
  const list = useApi(
    () => unwrap(api.GET("/api/v1/enrollment-tokens", { params: { query: { page, page_size: PAGE_SIZE } } })),
    [page],
  );
  const choices = useEnrollmentChoices();
  const vpn = useApi(() => unwrap(api.GET("/api/v1/vpn/settings")), []);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [revoking, setRevoking] = useState<Token | null>(null);

  const onCreated = (token: CreatedToken) => {
    setCreated(token);
    notify("Enrollment token created");
    if (page === 1) list.reload();
    else setQuery({ page: undefined });
  };

  return (
    <>
      <PageHeader
        title="Enrollment tokens"
        description="A device joins the organization by presenting an enrollment token once. Create one, then run the enroll command it shows on the device."
      />
      {vpn.data?.endpoint_is_example ? (
        <div class="notice notice-warn" role="status">
          <p>
            <strong>The VPN endpoint is still the example, {vpn.data.endpoint}.</strong> Devices enrolled now
            get a tunnel to a host that does not exist. Set <code>vpn.endpoint</code> in the server's
            configuration (or <code>BULWARK_VPN_ENDPOINT</code>) to your WireGuard server's public address and
            port, and restart Bulwark; enrolled devices get the new endpoint at their next check-in.
          </p>
        </div>
      ) : null}
      {mayWrite ? (
        <div class="card">
          {created ? (
            <EnrollmentTokenCreated token={created} onDone={() => setCreated(null)} />
          ) : (
            <EnrollmentTokenForm choices={choices} onCreated={onCreated} />
          )}
        </div>
      ) : null}
      <h2 id="tokens">Tokens</h2>
      <ErrorNotice error={list.error} title="The enrollment tokens could not be loaded" />
      <PagedList
        list={list}
        page={page}
        pageSize={PAGE_SIZE}
        caption="Enrollment tokens"
        pagesLabel="Enrollment token pages"
        loadingLabel="Loading enrollment tokens"
        empty={
          <EmptyState title="No enrollment tokens yet">
            <p>
              {mayWrite
                ? "Create one above; it is listed here with how many devices used it."
                : "Ask an administrator or operator to create one."}
            </p>
          </EmptyState>
        }
      >
        {(rows, tableCaption) => (
          <TokenTable
            rows={rows}
            caption={tableCaption}
            choices={choices}
            mayWrite={mayWrite}
            isLoading={list.isLoading}
            onRevoke={setRevoking}
          />
        )}
      </PagedList>
      <RevokeTokenDialog
        token={revoking}
        onClose={() => setRevoking(null)}
        onRevoked={() => {
          setRevoking(null);
          list.reload();
        }}
      />
    </>
  );
}

function TokenTable({
  rows,
  caption,
  choices,
  mayWrite,
  isLoading,
  onRevoke,
}: {
  rows: Token[];
  caption: string;
  choices: EnrollmentChoices;
  mayWrite: boolean;
  isLoading: boolean;
  onRevoke: (token: Token) => void;
}) {
  return (
    <TableWrap label={caption} isLoading={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col" class="numeric">
              Uses
            </th>
            <th scope="col">User</th>
            <th scope="col">Policy</th>
            <th scope="col">State</th>
            {mayWrite ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((token) => {
            const names = ownerNames(choices, token);
            return (
              <tr key={token.id}>
                <td>
                  <RelativeTime value={token.created_at} />
                </td>
                <td>
                  <RelativeTime value={token.expires_at} />
                </td>
                <td class="numeric">
                  {formatNumber(token.uses)} of{" "}
                  {token.max_uses === null ? "unlimited" : formatNumber(token.max_uses)}
                </td>
                <td>{names.user ?? <span class="muted">Nobody</span>}</td>
                <td>
                  {token.policy_id ? (
                    <Link href={`/policies/${token.policy_id}`}>{names.policy}</Link>
                  ) : (
                    <span class="muted">Organization default</span>
                  )}
                </td>
                <td>
                  <TokenStateBadge state={token.state} />
                </td>
                {mayWrite ? (
                  <td>
                    {token.state === "active" ? (
                      <button
                        type="button"
                        class="button-secondary"
                        aria-label={`Revoke ${describeToken(token)}`}
                        onClick={() => onRevoke(token)}
                      >
                        Revoke…
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}

function RevokeTokenDialog({
  token,
  onClose,
  onRevoked,
}: {
  token: Token | null;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const [error, setError] = useState<ReturnType<typeof asApiError> | undefined>();
  const revoke = async () => {
    if (!token) return;
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/enrollment-tokens/{id}", { params: { path: { id: token.id } } }));
      notify("Enrollment token revoked");
      onRevoked();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title="Revoke this enrollment token?"
      open={token !== null}
      confirmLabel="Revoke token"
      isDanger
      onConfirm={revoke}
      onClose={() => {
        setError(undefined);
        onClose();
      }}
    >
      {token ? (
        <p>
          After this, {describeToken(token)} enrolls no more devices.{" "}
          {token.uses === 0
            ? "No device has enrolled with it yet."
            : token.uses === 1
              ? "The device already enrolled with it keeps working."
              : `The ${formatNumber(token.uses)} devices already enrolled with it keep working.`}
        </p>
      ) : null}
      <ErrorNotice error={error} title="The token could not be revoked" />
    </ConfirmDialog>
  );
}
