import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ChangePasswordForm } from "../components/admin-account-password";
import { MfaMethodTable, RecoveryCodesSummary } from "../components/admin-mfa-methods";
import { PasskeySetup } from "../components/admin-mfa-passkey";
import { TotpSetup } from "../components/admin-mfa-totp";
import { RecoveryCodesPanel } from "../components/admin-recovery-codes";
import { ROLE_INFO } from "../components/admin-roles";
import { ErrorNotice, Loading, notify } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { StatusBadge } from "../components/status";
import { navigate } from "../lib/router";
import { type Session, sessionStore, signOut } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

/** The signed-in user's own account: profile, password and second factors. */
export function AccountPage(_: PageProps) {
  const session = useStore(sessionStore);
  const mfa = useApi(() => unwrap(api.GET("/api/v1/auth/mfa")), []);
  const [newCodes, setNewCodes] = useState<string[] | null>(null);
  if (!session) return null;
  const isSetupRequired = session.mfaSetupRequired;
  const hasTotp = mfa.data?.methods.some((method) => method.type === "totp") ?? false;

  const onFactorAdded = (what: string) => (codes: string[] | undefined) => {
    notify(`${what} added`);
    if (codes) setNewCodes(codes);
    mfa.reload();
  };

  return (
    <>
      <PageHeader
        title="Your account"
        description="Your profile, your password and how you prove it's you."
      />
      {isSetupRequired ? <SetupRequiredBanner isDone={mfa.data?.enabled === true} /> : null}
      {newCodes ? <RecoveryCodesPanel codes={newCodes} onDone={() => setNewCodes(null)} /> : null}
      <Profile session={session} />
      <section class="card" aria-labelledby="mfa-title">
        <h2 id="mfa-title">Multi-factor authentication</h2>
        <ErrorNotice error={mfa.error} title="Your second factors could not be loaded" />
        {mfa.data ? (
          <div class="stack">
            <p>
              {mfa.data.enabled ? (
                <StatusBadge value="success" label="On" />
              ) : (
                <StatusBadge value="inactive" label="Off" />
              )}{" "}
              {mfa.data.enabled
                ? "Signing in with your password also asks for one of your second factors."
                : "Add a second factor so that a stolen password alone can't open your account."}
            </p>
            {mfa.data.methods.length > 0 ? (
              <MfaMethodTable methods={mfa.data.methods} onRemoved={mfa.reload} />
            ) : null}
            {hasTotp ? null : <TotpSetup onEnabled={onFactorAdded("Authenticator app")} />}
            <PasskeySetup onAdded={onFactorAdded("Passkey")} />
            {mfa.data.enabled ? (
              <RecoveryCodesSummary
                remaining={mfa.data.recovery_codes_remaining}
                onRegenerated={setNewCodes}
              />
            ) : null}
          </div>
        ) : mfa.isLoading ? (
          <Loading label="Loading your second factors" />
        ) : null}
      </section>
      {isSetupRequired ? null : <ChangePasswordForm />}
    </>
  );
}

function Profile({ session }: { session: Session }) {
  const { user } = session;
  return (
    <section class="card" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <dl class="details">
        <dt>Name</dt>
        <dd>{user.name}</dd>
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Role</dt>
        <dd>
          {ROLE_INFO[user.role].label}
          <span class="muted"> — {ROLE_INFO[user.role].description}</span>
        </dd>
      </dl>
      <p class="small muted">An admin changes your name, email or role on the Users page.</p>
    </section>
  );
}

/**
 * The organization requires MFA and this user had none at sign-in: their session can only set one up.
 * Once one is confirmed, a new sign-in (with the factor) opens the rest of the console.
 */
function SetupRequiredBanner({ isDone }: { isDone: boolean }) {
  const signInAgain = async () => {
    await signOut();
    navigate("/sign-in", { replace: true });
  };
  if (isDone) {
    return (
      <div class="notice notice-ok" role="status">
        <p>
          <strong>Your second factor is set up.</strong> Save your recovery codes, then sign in again with
          your password and your new factor to use the console.
        </p>
        <button type="button" onClick={signInAgain}>
          Sign in again
        </button>
      </div>
    );
  }
  return (
    <div class="notice notice-warn">
      <p>
        <strong>Your organization requires multi-factor authentication.</strong> Set up an authenticator app
        or a passkey below. Until you have, the rest of the console stays closed; once it is set up, you sign
        in again with it.
      </p>
    </div>
  );
}
