import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ROLE_INFO, roleLabel } from "../components/admin-roles";
import { CreateUserDialog } from "../components/admin-user-create";
import { EditUserDialog } from "../components/admin-user-edit";
import { DeleteUserDialog, ResetMfaDialog } from "../components/admin-user-remove";
import { EmptyState, ErrorNotice, Loading, notify } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { Pagination } from "../components/pagination";
import { StatusBadge } from "../components/status";
import { formatDateTime, formatNumber, formatRelative } from "../lib/format";
import { setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type User = Schemas["User"];

const PAGE_SIZE = 20;

function pageOf(query: URLSearchParams): number {
  const page = Number(query.get("page"));
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** The organization's people: who may do what, who has a second factor, and who can't sign in. */
export function UsersPage(_: PageProps) {
  const session = useStore(sessionStore);
  const mayWrite = can(session, "users:write");
  const page = pageOf(useLocation().query);
  const list = useApi(
    () => unwrap(api.GET("/api/v1/users", { params: { query: { page, page_size: PAGE_SIZE } } })),
    [page],
  );
  const [isCreating, setCreating] = useState(false);
  const [editing, setEditing] = useState<User | null>(null);
  const [resetting, setResetting] = useState<User | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);

  const afterChange = (close: () => void) => () => {
    close();
    list.reload();
  };

  return (
    <>
      <PageHeader
        title="Users"
        description={
          list.data
            ? `${formatNumber(list.data.total)} ${list.data.total === 1 ? "person" : "people"} in this organization`
            : undefined
        }
      >
        {mayWrite ? (
          <button type="button" onClick={() => setCreating(true)}>
            Add user
          </button>
        ) : null}
      </PageHeader>
      <RolesSummary />
      <ErrorNotice error={list.error} title="The users could not be loaded" />
      {list.data ? (
        list.data.data.length === 0 ? (
          <EmptyState title={`Page ${formatNumber(page)} is past the end of the list`}>
            <button type="button" class="button-secondary" onClick={() => setQuery({ page: undefined })}>
              Go to the first page
            </button>
          </EmptyState>
        ) : (
          <>
            <UserTable
              rows={list.data.data}
              selfId={session?.user.id}
              caption={`Users, newest first, page ${formatNumber(page)} of ${formatNumber(list.data.total_pages)}`}
              mayWrite={mayWrite}
              isLoading={list.isLoading}
              onEdit={setEditing}
              onResetMfa={setResetting}
              onDelete={setDeleting}
            />
            <Pagination
              page={page}
              pageSize={PAGE_SIZE}
              total={list.data.total}
              label="User pages"
              onPage={(next) => setQuery({ page: next === 1 ? undefined : next })}
            />
          </>
        )
      ) : list.isLoading ? (
        <Loading label="Loading users" />
      ) : null}
      {mayWrite ? (
        <>
          <CreateUserDialog
            open={isCreating}
            onClose={() => setCreating(false)}
            onCreated={(user) => {
              setCreating(false);
              notify(`${user.name} added as ${roleLabel(user.role).toLowerCase()}`);
              // The list is newest first: the new user is at the top of page 1.
              if (page === 1) list.reload();
              else setQuery({ page: undefined });
            }}
          />
          <EditUserDialog
            user={editing}
            isSelf={editing?.id === session?.user.id}
            onClose={() => setEditing(null)}
            onSaved={afterChange(() => setEditing(null))}
          />
          <ResetMfaDialog
            user={resetting}
            onClose={() => setResetting(null)}
            onReset={afterChange(() => setResetting(null))}
          />
          <DeleteUserDialog
            user={deleting}
            onClose={() => setDeleting(null)}
            onDeleted={afterChange(() => setDeleting(null))}
          />
        </>
      ) : null}
    </>
  );
}

/** What the roles mean, one line each, folded away once known. */
function RolesSummary() {
  return (
    <details class="card">
      <summary>What each role may do</summary>
      <dl class="details">
        {Object.values(ROLE_INFO).map((info) => (
          <Fragment key={info.label}>
            <dt>{info.label}</dt>
            <dd>{info.description}</dd>
          </Fragment>
        ))}
      </dl>
    </details>
  );
}

/** Whether the user can sign in, in words: disabled by an admin, restricted at their own request, or active. */
function AccountState({ user }: { user: User }) {
  if (user.disabled) return <StatusBadge value="disabled" label="Disabled" />;
  if (user.restricted) return <StatusBadge value="suspended" label="Restricted" />;
  return <StatusBadge value="active" label="Active" />;
}

function UserTable({
  rows,
  selfId,
  caption,
  mayWrite,
  isLoading,
  onEdit,
  onResetMfa,
  onDelete,
}: {
  rows: User[];
  selfId: string | undefined;
  caption: string;
  mayWrite: boolean;
  isLoading: boolean;
  onEdit: (user: User) => void;
  onResetMfa: (user: User) => void;
  onDelete: (user: User) => void;
}) {
  return (
    <div class="table-wrap" aria-busy={isLoading}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Two-step sign-in</th>
            <th scope="col">Account</th>
            <th scope="col">Last sign-in</th>
            {mayWrite ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((user) => (
            <tr key={user.id}>
              <td>
                <strong>{user.name}</strong>
                {user.id === selfId ? <span class="muted"> (you)</span> : null}
              </td>
              <td>{user.email}</td>
              <td>{roleLabel(user.role)}</td>
              <td>
                {user.mfa_enabled ? (
                  <StatusBadge value="success" label="On" />
                ) : (
                  <StatusBadge value="inactive" label="Off" />
                )}
              </td>
              <td>
                <AccountState user={user} />
              </td>
              <td>
                {user.last_login_at ? (
                  <time dateTime={user.last_login_at} title={formatDateTime(user.last_login_at)}>
                    {formatRelative(user.last_login_at)}
                  </time>
                ) : (
                  <span class="muted">never</span>
                )}
              </td>
              {mayWrite ? (
                <td>
                  <div class="button-row">
                    <button
                      type="button"
                      class="button-secondary"
                      aria-label={`Edit ${user.name}`}
                      onClick={() => onEdit(user)}
                    >
                      Edit
                    </button>
                    {/* Your own factors go one by one on the Account page, with your password. */}
                    {user.mfa_enabled && user.id !== selfId ? (
                      <button
                        type="button"
                        class="button-secondary"
                        aria-label={`Remove second factors of ${user.name}`}
                        onClick={() => onResetMfa(user)}
                      >
                        Remove second factors…
                      </button>
                    ) : null}
                    <button
                      type="button"
                      class="button-secondary"
                      aria-label={`Delete ${user.name}`}
                      onClick={() => onDelete(user)}
                    >
                      Delete…
                    </button>
                  </div>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
