import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { type Role, RoleFieldset } from "./admin-roles";
import { Dialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";
import { Checkbox, Field } from "./form";

type User = Schemas["User"];

/** The title for a refused change: the last admin is the one refusal an admin must understand at once. */
export function userErrorTitle(error: ApiError | undefined, fallback: string): string {
  return error?.reason === "last_admin"
    ? "The organization needs at least one admin who can sign in"
    : fallback;
}

/** Edits a user's name, role and disabled flag, lifts a restriction, and lifts a sign-in lockout early. */
export function EditUserDialog({
  user,
  isSelf,
  onClose,
  onSaved,
}: {
  user: User | null;
  isSelf: boolean;
  onClose: () => void;
  onSaved: () => void;
}) {
  return (
    <Dialog title={user ? `Edit ${user.name}` : "Edit user"} open={user !== null} onClose={onClose}>
      {user ? <EditUserForm user={user} isSelf={isSelf} onCancel={onClose} onSaved={onSaved} /> : null}
    </Dialog>
  );
}

function EditUserForm({
  user,
  isSelf,
  onCancel,
  onSaved,
}: {
  user: User;
  isSelf: boolean;
  onCancel: () => void;
  onSaved: () => void;
}) {
  const [name, setName] = useState(user.name);
  const [role, setRole] = useState<Role>(user.role);
  const [isDisabled, setDisabled] = useState(user.disabled);
  const [isRestrictionLifted, setRestrictionLifted] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    // Only what changed: an unchanged field can't be refused (the last admin keeps "admin").
    const body: { name?: string; role?: Role; disabled?: boolean; restricted?: false } = {};
    if (name.trim() !== user.name) body.name = name.trim();
    if (role !== user.role) body.role = role;
    if (isDisabled !== user.disabled) body.disabled = isDisabled;
    if (isRestrictionLifted) body.restricted = false;
    if (Object.keys(body).length === 0) {
      onCancel();
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(api.PATCH("/api/v1/users/{id}", { params: { path: { id: user.id } }, body }));
      notify(`${body.name ?? user.name} saved`);
      onSaved();
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <form onSubmit={submit} noValidate>
        <p class="muted">{user.email}</p>
        <ErrorNotice
          error={formError(error, ["name", "role", "disabled"])}
          title={userErrorTitle(error, "The changes were not saved")}
        />
        {isSelf ? (
          <p class="notice notice-warn">
            This is your own account: another role, or disabling it, takes away your access to this page.
          </p>
        ) : null}
        <Field label="Name" error={fieldError(error, "name")}>
          {(control) => (
            <input
              {...control}
              value={name}
              maxLength={200}
              autoComplete="off"
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <RoleFieldset value={role} error={fieldError(error, "role")} onChange={setRole} />
        <Checkbox
          label="Disabled"
          hint="A disabled user can't sign in, and their sessions and API keys stop working at once."
          checked={isDisabled}
          error={fieldError(error, "disabled")}
          onChange={setDisabled}
        />
        {user.restricted ? (
          <div class="notice notice-warn">
            <p>
              {user.name} asked for the processing of their data to be restricted (GDPR): they can't sign in
              and their API keys don't work until the restriction is lifted.
            </p>
            <Checkbox
              label="Lift the restriction"
              hint="Only when the reason for it is resolved; the change is recorded in the audit log."
              checked={isRestrictionLifted}
              onChange={setRestrictionLifted}
            />
          </div>
        ) : null}
        <div class="button-row dialog-actions">
          <button type="button" class="button-secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Saving…" : "Save"}
          </button>
        </div>
      </form>
      <LockoutSection user={user} />
    </>
  );
}

/** After too many wrong passwords the user waits 15 minutes; an admin who knows why can end that now. */
function LockoutSection({ user }: { user: User }) {
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);
  const lift = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/users/{id}/lockout", { params: { path: { id: user.id } } }));
      notify(`${user.name} can sign in again now`);
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack small-gap">
      <h3>Locked out?</h3>
      <p class="small muted">
        After too many wrong passwords or codes, sign-in is refused for 15 minutes. Lift it early once you
        know the attempts were {user.name}'s own.
      </p>
      <ErrorNotice error={error} title="The lockout was not lifted" />
      <button type="button" class="button-secondary" disabled={isBusy} onClick={lift}>
        Lift sign-in lockout
      </button>
    </div>
  );
}
