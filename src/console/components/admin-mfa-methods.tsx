import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import { formatNumber } from "../lib/format";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";
import { Field } from "./form";
import { RelativeTime } from "./relative-time";

type Method = Schemas["MfaMethod"];

const METHOD_TYPES: Record<Method["type"], string> = {
  totp: "Authenticator app",
  webauthn: "Passkey or security key",
};

/** A wrong password is a 401 (counted like a failed sign-in): it belongs under the password field. */
function passwordError(error: ApiError | undefined): string | undefined {
  return error?.status === 401 ? error.body.message : undefined;
}

/** The password, asked again before a change to the second factors (the server checks it). */
function PasswordField({
  value,
  error,
  onChange,
}: {
  value: string;
  error: ApiError | undefined;
  onChange: (value: string) => void;
}) {
  return (
    <Field
      label="Your password"
      hint="Asked again because this changes how you sign in."
      error={passwordError(error)}
    >
      {(control) => (
        <input
          {...control}
          type="password"
          value={value}
          autoComplete="current-password"
          required
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** The user's confirmed second factors, each removable with the password. */
export function MfaMethodTable({ methods, onRemoved }: { methods: Method[]; onRemoved: () => void }) {
  const [removing, setRemoving] = useState<Method | null>(null);
  return (
    <>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Your second factors</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Added</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {methods.map((method) => (
              <tr key={method.id}>
                <td>{method.name}</td>
                <td>{METHOD_TYPES[method.type]}</td>
                <td>
                  <RelativeTime value={method.created_at} empty="—" />
                </td>
                <td>
                  <RelativeTime value={method.last_used_at} empty="never" />
                </td>
                <td>
                  <button
                    type="button"
                    class="button-secondary"
                    aria-label={`Remove ${method.name}`}
                    onClick={() => setRemoving(method)}
                  >
                    Remove…
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <RemoveMethodDialog
        method={removing}
        isLast={methods.length === 1}
        onClose={() => setRemoving(null)}
        onRemoved={() => {
          setRemoving(null);
          onRemoved();
        }}
      />
    </>
  );
}

function RemoveMethodDialog({
  method,
  isLast,
  onClose,
  onRemoved,
}: {
  method: Method | null;
  isLast: boolean;
  onClose: () => void;
  onRemoved: () => void;
}) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<ApiError>();
  const close = () => {
    setPassword("");
    setError(undefined);
    onClose();
  };
  const remove = async () => {
    if (!method) return;
    setError(undefined);
    try {
      await unwrap(
        api.DELETE("/api/v1/auth/mfa/{method_id}", {
          params: { path: { method_id: method.id } },
          body: { password },
        }),
      );
      notify(`${method.name} removed`);
      setPassword("");
      onRemoved();
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
      setPassword("");
    }
  };
  return (
    <ConfirmDialog
      title={method ? `Remove ${method.name}?` : "Remove this second factor?"}
      open={method !== null}
      confirmLabel="Remove"
      isDanger
      onConfirm={remove}
      onClose={close}
    >
      {method ? (
        <p>
          You will no longer be able to sign in with this {METHOD_TYPES[method.type].toLowerCase()}.
          {isLast
            ? " It is your only second factor: multi-factor authentication turns off and your recovery codes stop working."
            : ""}
        </p>
      ) : null}
      <ErrorNotice error={passwordError(error) ? undefined : error} title="It was not removed" />
      <PasswordField value={password} error={error} onChange={setPassword} />
    </ConfirmDialog>
  );
}

/** How many recovery codes are left, and a new set (the old one stops working) for the password. */
export function RecoveryCodesSummary({
  remaining,
  onRegenerated,
}: {
  remaining: number;
  onRegenerated: (codes: string[]) => void;
}) {
  const [isAsking, setAsking] = useState(false);
  const [password, setPassword] = useState("");
  const [error, setError] = useState<ApiError>();
  const close = () => {
    setAsking(false);
    setPassword("");
    setError(undefined);
  };
  const regenerate = async () => {
    setError(undefined);
    try {
      const { recovery_codes } = await unwrap(
        api.POST("/api/v1/auth/mfa/recovery-codes", { body: { password } }),
      );
      close();
      notify("New recovery codes made; the old ones no longer work");
      onRegenerated(recovery_codes);
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
      setPassword("");
    }
  };
  return (
    <div class="stack small-gap">
      <h3>Recovery codes</h3>
      <p>
        {remaining === 0 ? (
          <strong>No unused recovery codes left.</strong>
        ) : (
          `${formatNumber(remaining)} unused ${remaining === 1 ? "code" : "codes"} left.`
        )}{" "}
        Each signs you in once if you lose your second factors.
      </p>
      <button type="button" class="button-secondary" onClick={() => setAsking(true)}>
        Get new recovery codes…
      </button>
      <ConfirmDialog
        title="Get new recovery codes?"
        open={isAsking}
        confirmLabel="Get new codes"
        onConfirm={regenerate}
        onClose={close}
      >
        <p>You get 10 new codes, and the ones you have now stop working.</p>
        <ErrorNotice error={passwordError(error) ? undefined : error} title="No new codes were made" />
        <PasswordField value={password} error={error} onChange={setPassword} />
      </ConfirmDialog>
    </div>
  );
}
