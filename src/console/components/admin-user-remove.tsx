import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import { userErrorTitle } from "./admin-user-edit";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";

type User = Schemas["User"];

/** Deletes a user after their email is typed; the server refuses the last admin (409), shown here. */
export function DeleteUserDialog({
  user,
  onClose,
  onDeleted,
}: {
  user: User | null;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [error, setError] = useState<ApiError>();
  const remove = async () => {
    if (!user) return;
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/users/{id}", { params: { path: { id: user.id } } }));
      notify(`${user.name} deleted`);
      onDeleted();
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    }
  };
  return (
    <ConfirmDialog
      title={user ? `Delete ${user.name}?` : "Delete user?"}
      open={user !== null}
      confirmLabel="Delete user"
      typeToConfirm={user?.email}
      isDanger
      onConfirm={remove}
      onClose={() => {
        setError(undefined);
        onClose();
      }}
    >
      {user ? (
        <p>
          {user.name} ({user.email}) can no longer sign in: their sessions and API keys end at once, and their
          devices stay enrolled without an owner. Their audit log entries are kept.
        </p>
      ) : null}
      <ErrorNotice
        error={error}
        title={userErrorTitle(error, `${user?.name ?? "The user"} was not deleted`)}
      />
    </ConfirmDialog>
  );
}

/** "Lost phone": removes every second factor of a user, who then signs in with the password alone. */
export function ResetMfaDialog({
  user,
  onClose,
  onReset,
}: {
  user: User | null;
  onClose: () => void;
  onReset: () => void;
}) {
  const [error, setError] = useState<ApiError>();
  const reset = async () => {
    if (!user) return;
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/users/{id}/mfa", { params: { path: { id: user.id } } }));
      notify(`${user.name}'s second factors removed`);
      onReset();
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    }
  };
  return (
    <ConfirmDialog
      title={user ? `Remove ${user.name}'s second factors?` : "Remove second factors?"}
      open={user !== null}
      confirmLabel="Remove second factors"
      isDanger
      onConfirm={reset}
      onClose={() => {
        setError(undefined);
        onClose();
      }}
    >
      {user ? (
        <>
          <p>
            For a lost phone or security key: {user.name}'s authenticator app, passkeys and recovery codes are
            all removed, and they sign in with their password alone.
          </p>
          <p>
            Check first that the request really comes from {user.name}. Where the organization requires
            multi-factor authentication, they must set up a new factor at their next sign-in.
          </p>
        </>
      ) : null}
      <ErrorNotice error={error} title="The second factors were not removed" />
    </ConfirmDialog>
  );
}
