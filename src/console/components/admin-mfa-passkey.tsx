import { useState } from "preact/hooks";
import { type ApiError, api, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { ErrorNotice } from "./feedback";
import { Field } from "./form";

/** Whether this browser can create a passkey from the server's JSON options (a secure context is needed too). */
function canCreatePasskeys(): boolean {
  return (
    typeof PublicKeyCredential !== "undefined" &&
    typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function" &&
    Boolean(navigator.credentials)
  );
}

/** Registers a passkey or security key: the server's options, the browser's ceremony, the credential back. */
export function PasskeySetup({ onAdded }: { onAdded: (recoveryCodes: string[] | undefined) => void }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<ApiError>();
  const [nameProblem, setNameProblem] = useState<string>();
  const [isBusy, setBusy] = useState(false);
  const isSupported = canCreatePasskeys();

  const add = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setNameProblem(name.trim() ? undefined : "Give the passkey a name first");
    if (!name.trim()) return;
    setBusy(true);
    try {
      const options = await unwrap(api.POST("/api/v1/auth/mfa/webauthn/registration-options", {}));
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(
        options as unknown as PublicKeyCredentialCreationOptionsJSON,
      );
      const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
      if (!credential) return;
      const method = await unwrap(
        api.POST("/api/v1/auth/mfa/webauthn", {
          body: { name: name.trim(), response: credential.toJSON() as never },
        }),
      );
      setName("");
      onAdded(method.recovery_codes);
    } catch (failure) {
      // The browser's own refusals (cancelled, timed out, already registered) are DOMExceptions.
      setError(asApiError(failure, "The passkey was not added"));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack small-gap">
      <h3>Passkey or security key</h3>
      <p class="muted">
        Your device's fingerprint or face unlock, or a hardware key such as a YubiKey. Nothing to type at
        sign-in.
      </p>
      {isSupported ? (
        <form onSubmit={add} noValidate class="stack">
          <ErrorNotice error={formError(error, ["name"])} title="The passkey was not added" />
          <Field
            label="Passkey name"
            hint="To tell your passkeys apart, e.g. “MacBook” or “YubiKey 5C”."
            error={nameProblem ?? fieldError(error, "name")}
          >
            {(control) => (
              <input
                {...control}
                value={name}
                maxLength={100}
                autoComplete="off"
                onInput={(event) => setName(event.currentTarget.value)}
              />
            )}
          </Field>
          <div class="button-row">
            <button type="submit" disabled={isBusy}>
              {isBusy ? "Waiting for the passkey…" : "Add a passkey"}
            </button>
          </div>
        </form>
      ) : (
        <p class="notice notice-warn">
          This browser can't create passkeys here (it needs a recent browser and an https address). Use an
          authenticator app, or another browser.
        </p>
      )}
    </div>
  );
}
