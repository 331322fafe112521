import { useEffect, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { ErrorNotice } from "../components/feedback";
import { Field } from "../components/form";
import { Logo } from "../components/logo";
import { asApiError, localError } from "../lib/api-errors";
import { BASE, navigate, useLocation } from "../lib/router";
import { startSession } from "../lib/session";

type Challenge = Schemas["MfaChallenge"];
type MfaMethod = "totp" | "webauthn" | "recovery_code";

/** Where to go once signed in: the page the user asked for, if it is one of the console's. */
function destination(next: string | null): string {
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/";
}

async function finishSignIn(answer: { token: string; mfa_setup_required?: true }, next: string | null) {
  await startSession(answer.token, answer.mfa_setup_required === true);
  navigate(answer.mfa_setup_required ? "/account" : destination(next), { replace: true });
}

/** The second step: the authenticator app's code, a passkey, or a recovery code. */
function SecondFactor({
  challenge,
  next,
  onCancel,
}: {
  challenge: Challenge;
  next: string | null;
  onCancel: () => void;
}) {
  const [method, setMethod] = useState<MfaMethod>(
    challenge.mfa_methods.includes("totp") ? "totp" : "webauthn",
  );
  const [code, setCode] = useState("");
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);
  // The step replaces the password form: focus its heading, or keyboard focus would fall to the page.
  useEffect(() => document.querySelector<HTMLElement>("main h1")?.focus(), []);

  const verify = async (value: string, as: MfaMethod) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await unwrap(
        api.POST("/api/v1/auth/mfa/verify", {
          body: { mfa_token: challenge.mfa_token, method: as, code: value, refresh_cookie: true },
        }),
      );
      await finishSignIn(answer, next);
    } catch (failure) {
      setError(failure as ApiError);
      setCode("");
    } finally {
      setBusy(false);
    }
  };

  const usePasskey = async () => {
    setError(undefined);
    try {
      const options = await unwrap(
        api.POST("/api/v1/auth/mfa/webauthn/authentication-options", {
          body: { mfa_token: challenge.mfa_token },
        }),
      );
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(
        options as unknown as PublicKeyCredentialRequestOptionsJSON,
      );
      const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
      if (!credential) return;
      await verify(JSON.stringify(credential.toJSON()), "webauthn");
    } catch (failure) {
      setError(asApiError(failure, "The passkey was not used"));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Verify it's you</h1>
      <ErrorNotice error={error} />
      {method === "webauthn" ? (
        <div class="stack">
          <p>Use the passkey or security key you set up for this account.</p>
          <button type="button" onClick={usePasskey} disabled={isBusy}>
            Use a passkey
          </button>
        </div>
      ) : (
        <form
          class="stack"
          onSubmit={(event) => {
            event.preventDefault();
            void verify(code.trim(), method);
          }}
        >
          <Field
            label={method === "totp" ? "Authentication code" : "Recovery code"}
            hint={
              method === "totp"
                ? "The 6 digits your authenticator app shows now."
                : "One of the codes you saved when you set up MFA; each works once."
            }
          >
            {(control) => (
              <input
                {...control}
                name="code"
                value={code}
                autoComplete="one-time-code"
                inputMode={method === "totp" ? "numeric" : "text"}
                required
                onInput={(event) => setCode(event.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Verifying…" : "Verify"}
          </button>
        </form>
      )}
      <div class="stack small-gap">
        {challenge.mfa_methods.includes("totp") && method !== "totp" ? (
          <button type="button" class="button-link" onClick={() => setMethod("totp")}>
            Use your authenticator app
          </button>
        ) : null}
        {challenge.mfa_methods.includes("webauthn") && method !== "webauthn" ? (
          <button type="button" class="button-link" onClick={() => setMethod("webauthn")}>
            Use a passkey
          </button>
        ) : null}
        {method !== "recovery_code" ? (
          <button type="button" class="button-link" onClick={() => setMethod("recovery_code")}>
            Use a recovery code
          </button>
        ) : null}
        <button type="button" class="button-link" onClick={onCancel}>
          Start over
        </button>
      </div>
    </>
  );
}

/** A random value the identity provider sends back unchanged; kept in this tab until it does. */
function newState(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(
    /[+/=]/g,
    (c) => ({ "+": "-", "/": "_", "=": "" })[c] ?? "",
  );
}

/** Single sign-on: the organization's identity provider, found from the email's domain. */
async function startSingleSignOn(email: string, next: string | null): Promise<"none"> {
  const { connections } = await unwrap(api.POST("/api/v1/auth/sso/discover", { body: { email } }));
  const connection = connections[0];
  if (!connection) return "none";
  const state = newState();
  const redirectUri = `${location.origin}${BASE}/sso/callback`;
  sessionStorage.setItem("bulwark-sso", JSON.stringify({ state, type: connection.type, next }));
  const query = new URLSearchParams({ redirect_uri: redirectUri, state });
  if (connection.type === "oidc") {
    query.set("client_id", connection.client_id ?? "");
    query.set("scope", "openid profile email");
    location.assign(`/api/v1/auth/sso/oidc/authorize?${query}`);
  } else {
    query.set("organization_id", connection.organization_id);
    location.assign(`/api/v1/auth/sso/saml/login?${query}`);
  }
  return new Promise(() => {});
}

export function SignInPage() {
  const { query } = useLocation();
  const next = query.get("next");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [challenge, setChallenge] = useState<Challenge>();
  const [error, setError] = useState<ApiError>();
  const [notice, setNotice] = useState<string>();
  const [isBusy, setBusy] = useState(false);
  useEffect(() => {
    document.title = "Sign in · Bulwark";
  }, []);

  const signIn = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const answer = await unwrap(
        api.POST("/api/v1/auth/login", { body: { email, password, refresh_cookie: true } }),
      );
      if ("mfa_required" in answer) setChallenge(answer);
      else await finishSignIn(answer, next);
    } catch (failure) {
      setError(failure as ApiError);
      // The button was disabled while busy, which drops focus: back to the password, to try again.
      requestAnimationFrame(() =>
        document.querySelector<HTMLInputElement>('input[name="password"]')?.focus(),
      );
    } finally {
      setBusy(false);
    }
  };

  const singleSignOn = async () => {
    setError(undefined);
    setNotice(undefined);
    if (!email.includes("@")) {
      setNotice("Enter your work email first: it tells Bulwark which identity provider to use.");
      return;
    }
    setBusy(true);
    try {
      if ((await startSingleSignOn(email, next)) === "none")
        setNotice(`No single sign-on is set up for ${email.split("@")[1]}. Sign in with your password.`);
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <div class="sign-in-card">
        <p class="brand">
          <Logo /> Bulwark
        </p>
        {challenge ? (
          <SecondFactor challenge={challenge} next={next} onCancel={() => setChallenge(undefined)} />
        ) : (
          <>
            <h1 tabIndex={-1}>Sign in</h1>
            <ErrorNotice error={error} />
            {notice ? (
              <p class="notice" role="status">
                {notice}
              </p>
            ) : null}
            <form class="stack" onSubmit={signIn}>
              <Field label="Email">
                {(control) => (
                  <input
                    {...control}
                    type="email"
                    name="email"
                    autoComplete="username"
                    required
                    value={email}
                    onInput={(event) => setEmail(event.currentTarget.value)}
                  />
                )}
              </Field>
              <Field label="Password">
                {(control) => (
                  <input
                    {...control}
                    type="password"
                    name="password"
                    autoComplete="current-password"
                    required
                    value={password}
                    onInput={(event) => setPassword(event.currentTarget.value)}
                  />
                )}
              </Field>
              <button type="submit" disabled={isBusy}>
                {isBusy ? "Signing in…" : "Sign in"}
              </button>
            </form>
            <div class="divider">
              <span>or</span>
            </div>
            <button type="button" class="button-secondary wide" onClick={singleSignOn} disabled={isBusy}>
              Sign in with single sign-on
            </button>
          </>
        )}
      </div>
    </main>
  );
}

/** Where the identity provider sends the browser back: finish the sign-in with the one-time code. */
export function SsoCallbackPage() {
  const { query } = useLocation();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    const pending = JSON.parse(sessionStorage.getItem("bulwark-sso") ?? "null") as {
      state: string;
      type: "oidc" | "saml";
      next: string | null;
    } | null;
    sessionStorage.removeItem("bulwark-sso");
    const state = query.get("state");
    const code = query.get("code");
    const fail = (message: string, details?: string) => setError(localError(message, details));
    if (query.get("error"))
      return fail(
        "The identity provider refused the sign-in",
        query.get("error_description") ?? query.get("error") ?? undefined,
      );
    if (!pending || !state || pending.state !== state)
      return fail("This sign-in was not started here", "start again from the sign-in page");
    if (!code) return fail("The identity provider sent no code");
    const exchange =
      pending.type === "oidc"
        ? api.POST("/api/v1/auth/sso/oidc/callback", {
            body: {
              code,
              state,
              ...(query.get("iss") ? { iss: query.get("iss") ?? "" } : {}),
              refresh_cookie: true,
            },
          })
        : api.POST("/api/v1/auth/sso/saml/token", { body: { code, refresh_cookie: true } });
    unwrap(exchange)
      .then((answer) => finishSignIn(answer, pending.next))
      .catch((failure: ApiError) => setError(failure));
  }, []);
  return (
    <main id="main" class="sign-in">
      <div class="sign-in-card">
        <h1 tabIndex={-1}>Signing you in</h1>
        {error ? (
          <>
            <ErrorNotice error={error} />
            <a href={`${BASE}/sign-in`}>Back to sign in</a>
          </>
        ) : (
          <p role="status">Finishing the single sign-on…</p>
        )}
      </div>
    </main>
  );
}
