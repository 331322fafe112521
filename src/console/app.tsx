import type { FunctionComponent } from "preact";
import { useEffect } from "preact/hooks";
import { Loading } from "./components/feedback";
import { Shell } from "./components/layout";
import { match, navigate, useLocation } from "./lib/router";
import { resumeSession, sessionStore, takeSignedOut } from "./lib/session";
import { useStore } from "./lib/store";
import { AccountPage } from "./pages/account";
import { AddPhonePage } from "./pages/add-phone";
import { ApiKeysPage } from "./pages/api-keys";
import { AuditPage } from "./pages/audit";
import { DashboardPage } from "./pages/dashboard";
import { DevicePage } from "./pages/device";
import { DevicesPage } from "./pages/devices";
import { EnrollmentTokensPage } from "./pages/enrollment-tokens";
import { NotFoundPage } from "./pages/not-found";
import { PoliciesPage } from "./pages/policies";
import { PolicyPage } from "./pages/policy";
import { PolicyEditorPage } from "./pages/policy-editor";
import { SettingsPage } from "./pages/settings";
import { SignInPage, SsoCallbackPage } from "./pages/sign-in";
import { UsersPage } from "./pages/users";
import { WebhookPage } from "./pages/webhook";
import { WebhooksPage } from "./pages/webhooks";

export type PageProps = { params: Record<string, string> };

/** Every signed-in page, by path pattern; the first match wins. */
const ROUTES: [string, FunctionComponent<PageProps>][] = [
  ["/", DashboardPage],
  ["/devices", DevicesPage],
  ["/devices/add-phone", AddPhonePage],
  ["/devices/:id", DevicePage],
  ["/enrollment-tokens", EnrollmentTokensPage],
  ["/policies", PoliciesPage],
  ["/policies/new", PolicyEditorPage],
  ["/policies/:id", PolicyPage],
  ["/policies/:id/edit", PolicyEditorPage],
  ["/webhooks", WebhooksPage],
  ["/webhooks/:id", WebhookPage],
  ["/users", UsersPage],
  ["/api-keys", ApiKeysPage],
  ["/audit", AuditPage],
  ["/settings", SettingsPage],
  ["/account", AccountPage],
];

export function App() {
  const session = useStore(sessionStore);
  const { path } = useLocation();
  const isPublic = path === "/sign-in" || path === "/sso/callback";

  useEffect(() => {
    if (!isPublic) void resumeSession();
    else sessionStore.set(null);
  }, []);

  useEffect(() => {
    if (session === null && !isPublic) {
      const here = takeSignedOut() ? "/" : `${location.pathname.slice("/console".length)}${location.search}`;
      navigate(here && here !== "/" ? `/sign-in?next=${encodeURIComponent(here)}` : "/sign-in", {
        replace: true,
      });
    }
    if (session?.mfaSetupRequired && path !== "/account") navigate("/account", { replace: true });
  }, [session, isPublic, path]);

  if (path === "/sign-in") return <SignInPage />;
  if (path === "/sso/callback") return <SsoCallbackPage />;
  if (!session) return <Loading label="Opening the console" />;
  for (const [pattern, Page] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      return (
        <Shell session={session}>
          <Page params={params} />
        </Shell>
      );
    }
  }
  return (
    <Shell session={session}>
      <NotFoundPage params={{}} />
    </Shell>
  );
}
