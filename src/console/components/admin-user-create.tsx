import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { type Role, RoleFieldset } from "./admin-roles";
import { Dialog } from "./dialog";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";

const MIN_PASSWORD_LENGTH = 12;
const FIELDS = ["name", "email", "role", "password"];

/** "Add user": name, email, role and a first password, which the admin hands over and the user changes. */
export function CreateUserDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (user: Schemas["User"]) => void;
}) {
  return (
    <Dialog title="Add a user" open={open} onClose={onClose}>
      <CreateUserForm onCancel={onClose} onCreated={onCreated} />
    </Dialog>
  );
}

function CreateUserForm({
  onCancel,
  onCreated,
}: {
  onCancel: () => void;
  onCreated: (user: Schemas["User"]) => void;
}) {
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [password, setPassword] = useState("");
  const [isPasswordShown, setPasswordShown] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const user = await unwrap(
        api.POST("/api/v1/users", { body: { name: name.trim(), email: email.trim(), role, password } }),
      );
      onCreated(user);
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };

  // A taken email is a 409 without field errors: it still belongs under the email field.
  const emailError = error?.reason === "email_taken" ? error.body.message : fieldError(error, "email");
  return (
    <form onSubmit={submit} noValidate>
      <ErrorNotice
        error={error?.reason === "email_taken" ? undefined : formError(error, FIELDS)}
        title="The user could not be added"
      />
      <Field label="Name" error={fieldError(error, "name")}>
        {(control) => (
          <input
            {...control}
            value={name}
            maxLength={200}
            autoComplete="off"
            required
            onInput={(event) => setName(event.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Email" error={emailError}>
        {(control) => (
          <input
            {...control}
            type="email"
            value={email}
            maxLength={320}
            autoComplete="off"
            spellcheck={false}
            required
            onInput={(event) => setEmail(event.currentTarget.value)}
          />
        )}
      </Field>
      <RoleFieldset value={role} error={fieldError(error, "role")} onChange={setRole} />
      <Field
        label="First password"
        hint={`At least ${MIN_PASSWORD_LENGTH} characters. Give it to the user by a safe channel; they change it on their Account page.`}
        error={fieldError(error, "password")}
      >
        {(control) => {
          const props = {
            ...control,
            value: password,
            minLength: MIN_PASSWORD_LENGTH,
            maxLength: 1024,
            autoComplete: "new-password",
            required: true,
            onInput: (event: Event) => setPassword((event.currentTarget as HTMLInputElement).value),
          };
          // Two elements rather than a changing type: the type is part of each one's typing.
          return isPasswordShown ? <input {...props} type="text" /> : <input {...props} type="password" />;
        }}
      </Field>
      <Checkbox label="Show the password" checked={isPasswordShown} onChange={setPasswordShown} />
      <div class="button-row dialog-actions">
        <button type="button" class="button-secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={isBusy}>
          {isBusy ? "Adding…" : "Add user"}
        </button>
      </div>
    </form>
  );
}
