import { useState } from "preact/hooks";
import { type ApiError, api, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { ErrorNotice, notify } from "./feedback";
import { Field } from "./form";

const MIN_PASSWORD_LENGTH = 12;

/** Changes the signed-in user's password; their other sessions end (the server says so, and so do we). */
export function ChangePasswordForm() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeated, setRepeated] = useState("");
  const [error, setError] = useState<ApiError>();
  const [isMismatchShown, setMismatchShown] = useState(false);
  const [isBusy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    if (next !== repeated) {
      setMismatchShown(true);
      return;
    }
    setMismatchShown(false);
    setBusy(true);
    try {
      await unwrap(
        api.PUT("/api/v1/users/me/password", { body: { current_password: current, new_password: next } }),
      );
      setCurrent("");
      setNext("");
      setRepeated("");
      notify("Password changed; your other sessions were signed out");
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit} noValidate>
        <ErrorNotice
          error={formError(error, ["current_password", "new_password"])}
          title="The password was not changed"
        />
        <Field label="Current password" error={fieldError(error, "current_password")}>
          {(control) => (
            <input
              {...control}
              type="password"
              value={current}
              autoComplete="current-password"
              onInput={(event) => setCurrent(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="New password"
          hint={`At least ${MIN_PASSWORD_LENGTH} characters. Your other sessions are signed out when it changes.`}
          error={fieldError(error, "new_password")}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              value={next}
              minLength={MIN_PASSWORD_LENGTH}
              autoComplete="new-password"
              onInput={(event) => setNext(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="New password again"
          error={isMismatchShown && next !== repeated ? "does not match the new password" : undefined}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              value={repeated}
              autoComplete="new-password"
              onInput={(event) => setRepeated(event.currentTarget.value)}
            />
          )}
        </Field>
        <div class="button-row">
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Changing…" : "Change password"}
          </button>
        </div>
      </form>
    </section>
  );
}
