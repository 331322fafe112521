import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { CopyField } from "./copy";
import { ErrorNotice } from "./feedback";
import { Field } from "./form";
import { svgDataUrl } from "./qr-code";

/**
 * Sets up an authenticator app: a QR code to scan (or the secret to type), then the app's current code to
 * prove it works. Nothing is enabled until that code is confirmed.
 */
export function TotpSetup({ onEnabled }: { onEnabled: (recoveryCodes: string[] | undefined) => void }) {
  const [enrolment, setEnrolment] = useState<Schemas["TotpEnrolment"] | null>(null);
  const [code, setCode] = useState("");
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);

  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setEnrolment(await unwrap(api.POST("/api/v1/auth/mfa/totp", { body: {} })));
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };

  const confirm = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await unwrap(
        api.POST("/api/v1/auth/mfa/totp/confirm", { body: { code: code.replace(/\s/g, "") } }),
      );
      setEnrolment(null);
      setCode("");
      onEnabled(result.recovery_codes);
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
      setCode("");
    } finally {
      setBusy(false);
    }
  };

  if (!enrolment) {
    return (
      <div class="stack small-gap">
        <h3>Authenticator app</h3>
        <p class="muted">
          An app on your phone (such as Google Authenticator, Microsoft Authenticator or 1Password) shows a
          new 6-digit code every 30 seconds.
        </p>
        <ErrorNotice error={error} title="The authenticator app could not be set up" />
        <button type="button" onClick={start} disabled={isBusy}>
          Set up an authenticator app
        </button>
      </div>
    );
  }

  // A wrong code is a 400 or 401 without field errors: it belongs under the code field all the same.
  const codeError =
    fieldError(error, "code") ??
    (error && (error.status === 400 || error.status === 401) ? error.body.message : undefined);
  return (
    <div class="stack">
      <h3>Set up your authenticator app</h3>
      <ol class="stack">
        <li>
          <p>Scan this QR code with the app:</p>
          <img
            src={svgDataUrl(enrolment.qr_svg)}
            alt="QR code that adds Bulwark to an authenticator app"
            width={200}
            height={200}
          />
        </li>
        <li>
          <p>Or, if you can't scan, type this key into the app (time-based, 6 digits):</p>
          <CopyField label="Secret key" value={enrolment.secret} isCode />
        </li>
        <li>
          <form onSubmit={confirm} noValidate>
            <ErrorNotice
              error={codeError ? undefined : formError(error, ["code"])}
              title="The app was not confirmed"
            />
            <Field label="Code from the app" hint="The 6 digits it shows now." error={codeError}>
              {(control) => (
                <input
                  {...control}
                  value={code}
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  maxLength={10}
                  onInput={(event) => setCode(event.currentTarget.value)}
                />
              )}
            </Field>
            <div class="button-row">
              <button type="submit" disabled={isBusy || code.trim() === ""}>
                {isBusy ? "Confirming…" : "Confirm"}
              </button>
              <button type="button" class="button-secondary" onClick={() => setEnrolment(null)}>
                Cancel
              </button>
            </div>
          </form>
        </li>
      </ol>
    </div>
  );
}
