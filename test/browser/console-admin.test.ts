/**
 * The console's administration pages in Chromium against the built executable: users (add, change the
 * role, the last admin refused), the audit log (the creation entry, filtered by action), the organization
 * (an invalid OIDC issuer and MFA required without a factor shown inline; then MFA required for real), and
 * the account page (an authenticator app set up, its code used at the next sign-in; a user whom the
 * organization's requirement sends there first).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Locator, Page } from "playwright-core";
import {
  ADMIN,
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";
import { makeSigningCertificate } from "../helpers/saml-idp";
import { totpCode } from "../helpers/totp";

let harness: ConsoleHarness;
let adminToken: string;
/** The admin's recovery codes, from the account page once the authenticator app is set up. */
const adminRecoveryCodes: string[] = [];

const OLIVE = { name: "Olive Operator", email: "olive@example.com", password: "olive-first-password" };
const STEP_MS = 30_000;

/**
 * Codes of one authenticator, each for a time step not used before: the server accepts each step once
 * per user, and one step of drift either way. Waits (up to one step) only when both usable steps are spent.
 */
function authenticator(secret: string) {
  let lastStep = Number.NEGATIVE_INFINITY;
  return async (): Promise<string> => {
    const current = () => Math.floor(Date.now() / STEP_MS);
    const step = Math.max(current(), lastStep + 1);
    while (step > current() + 1) await Bun.sleep(500);
    lastStep = step;
    return totpCode(secret, new Date(step * STEP_MS + 1_000));
  };
}

beforeAll(async () => {
  harness = await startConsoleHarness();
  adminToken = await harness.adminToken();
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

async function open(page: Page, path: string, heading: string) {
  await page.goto(`${harness.origin}/console${path}`);
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
}

/** The text that describes a control (its hint and its error), as a screen reader reads it with the control. */
async function descriptionOf(page: Page, control: Locator): Promise<string> {
  const ids = ((await control.getAttribute("aria-describedby")) ?? "").split(" ").filter(Boolean);
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
  return texts.join(" ");
}

function userRow(page: Page, name: string) {
  return page
    .getByRole("table", { name: /^Users,/ })
    .getByRole("row")
    .filter({ hasText: name });
}

async function findUser(email: string) {
  const list = await harness.api("GET", "/api/v1/users?page_size=100", { token: adminToken });
  return (list.body.data as { email: string; role: string; id: string }[]).find(
    (user) => user.email === email,
  );
}

/** The authenticator-app setup on the account page: the secret read from the page, a code typed back. */
async function setUpAuthenticatorApp(page: Page) {
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await page.getByRole("img", { name: /QR code/ }).waitFor();
  const secret = await page.getByLabel("Secret key").inputValue();
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  const nextCode = authenticator(secret);
  await page.getByLabel("Code from the app").fill(await nextCode());
  await page.getByRole("button", { name: "Confirm" }).click();
  await page.getByRole("heading", { name: "Save your recovery codes" }).waitFor();
  const recoveryCodes = (await page.getByRole("textbox", { name: "Recovery codes" }).inputValue()).split(
    "\n",
  );
  expect(recoveryCodes).toHaveLength(10);
  return { nextCode, recoveryCodes };
}

describe("console administration", () => {
  test("an admin adds an operator, changes the role, and can't delete the last admin", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin users", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/users", "Users");
      await userRow(page, ADMIN.email).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByRole("button", { name: "Add user" }).click();
      const add = page.getByRole("dialog", { name: "Add a user" });
      await add.getByLabel("Name").fill(OLIVE.name);
      await add.getByLabel("Email").fill(OLIVE.email);
      await add.getByRole("radio", { name: "Operator" }).check();
      // Each role says what it allows.
      expect(await descriptionOf(page, add.getByRole("radio", { name: "Operator" }))).toContain("devices");
      // Too short a password: the server's message under the field, nothing created.
      await add.getByLabel("First password").fill("short");
      await add.getByRole("button", { name: "Add user" }).click();
      await add.getByText("must be at least 12 characters").waitFor();
      expect(await add.getByLabel("First password").getAttribute("aria-invalid")).toBe("true");
      expect(await findUser(OLIVE.email)).toBeUndefined();
      expect(await accessibilityViolations(page)).toEqual([]);
      await add.getByLabel("First password").fill(OLIVE.password);
      await add.getByRole("button", { name: "Add user" }).click();
      await add.waitFor({ state: "hidden" });

      const olive = userRow(page, OLIVE.name);
      await olive.getByRole("cell", { name: "Operator", exact: true }).waitFor();
      expect(await olive.textContent()).toContain(OLIVE.email);
      expect(await olive.textContent()).toContain("Off"); // no second factor yet
      expect((await findUser(OLIVE.email))?.role).toBe("operator");

      await page.getByRole("button", { name: `Edit ${OLIVE.name}` }).click();
      const edit = page.getByRole("dialog", { name: `Edit ${OLIVE.name}` });
      expect(await edit.getByRole("radio", { name: "Operator" }).isChecked()).toBe(true);
      await edit.getByRole("radio", { name: "Auditor" }).check();
      await edit.getByRole("button", { name: "Save" }).click();
      await edit.waitFor({ state: "hidden" });
      await olive.getByRole("cell", { name: "Auditor", exact: true }).waitFor();
      expect((await findUser(OLIVE.email))?.role).toBe("auditor");

      // The only admin: the server's 409 is shown in the dialog, in words, and nothing is deleted.
      const self = userRow(page, "(you)");
      await self.getByRole("button", { name: /^Delete / }).click();
      const remove = page.getByRole("dialog", { name: /^Delete / });
      await remove.getByLabel(/Type .* to confirm/).fill(ADMIN.email);
      await remove.getByRole("button", { name: "Delete user" }).click();
      await remove.getByRole("alert").getByText("needs at least one admin").waitFor();
      expect(await remove.getByRole("alert").textContent()).toContain("last admin");
      await remove.getByRole("button", { name: "Cancel" }).click();
      expect(await findUser(ADMIN.email)).toBeDefined();
    });
  }, 60_000);

  test("the audit log shows the user's creation and narrows to one action", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin audit", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/audit", "Audit log");
      const rows = page.getByRole("table", { name: /^Audit log,/ }).locator("tbody tr");
      const creation = rows.filter({ hasText: "user.create" }).filter({ hasText: OLIVE.name });
      await creation.waitFor();
      expect(await creation.textContent()).toContain("Success");
      const everything = await rows.count();
      expect(everything).toBeGreaterThan(2);
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByLabel("Action").fill("user.create");
      await page.getByLabel("Action").press("Enter");
      await page.waitForURL(/action=user\.create/);
      await rows.filter({ hasText: "auth.login" }).first().waitFor({ state: "detached" });
      const actions = await rows.locator("td:nth-child(3)").allTextContents();
      expect(actions.length).toBeLessThan(everything);
      expect(new Set(actions)).toEqual(new Set(["user.create"]));

      // The entry's details open below it.
      await creation.getByRole("button", { name: /^Show details of user\.create/ }).click();
      await page
        .getByRole("table", { name: /^Audit log,/ })
        .getByText("operator", { exact: true })
        .waitFor();
      // The filter lives in the URL: a reload keeps it.
      await page.reload();
      expect(await page.getByLabel("Action").inputValue()).toBe("user.create");
      await creation.waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("organization settings show an invalid issuer and a refused MFA requirement next to their fields", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin settings errors", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/settings", "Organization settings");
      await page.getByText("bulwark org set-plan").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      const issuer = page.getByLabel("Issuer URL");
      await issuer.fill("not a url");
      await page.getByRole("button", { name: "Save OpenID Connect" }).click();
      await page.getByText("must be an absolute https URL").waitFor();
      expect(await issuer.getAttribute("aria-invalid")).toBe("true");
      expect(await descriptionOf(page, issuer)).toContain("must be an absolute https URL");

      // Requiring MFA needs the admin's own factor first (409): said under the checkbox, with the way out.
      const requireMfa = page.getByRole("checkbox", { name: "Require multi-factor authentication" });
      await requireMfa.check();
      await page.getByRole("button", { name: "Save organization" }).click();
      await page.getByText("Set up your own second factor on your Account page first").waitFor();
      expect(await descriptionOf(page, requireMfa)).toContain("Set up your own second factor");
      await page.getByRole("link", { name: "Set up your second factor" }).waitFor();
      const organization = await harness.api("GET", "/api/v1/organizations/current", { token: adminToken });
      expect(organization.body.require_mfa).toBe(false);
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("an email domain waits for the operator's confirmation on an installation of several organizations", async () => {
    // A second tenant makes the installation multi-organization; SAML needs the enterprise plan.
    for (const args of [
      [
        "admin",
        "create",
        "--email",
        "other@tenant.test",
        "--password",
        "correct-horse-battery",
        "--org",
        "Tenant Two",
      ],
      ["org", "set-plan", "--org", "Default", "--plan", "enterprise"],
    ]) {
      const done = await harness.operator(args);
      expect(done.code, done.stderr).toBe(0);
    }
    const idp = makeSigningCertificate("console-idp");
    const saved = await harness.api("PATCH", "/api/v1/organizations/current", {
      token: adminToken,
      body: {
        sso: {
          saml: {
            enabled: true,
            idp_entity_id: "https://idp.console.test/metadata",
            idp_sso_url: "https://idp.console.test/sso",
            idp_certificate: idp.certificate,
            allowed_domains: ["console.test"],
          },
        },
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin sso domains", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/settings", "Organization settings");
      const domains = page.getByRole("region", { name: "Email domains" });
      await domains
        .getByText("console.test: waiting for the operator of this Bulwark to confirm it")
        .waitFor();
      const command = await domains.locator("pre").innerText();
      expect(command).toMatch(/^bulwark org sso-domain add --org [0-9a-f-]{36} console\.test$/);
      expect(await accessibilityViolations(page)).toEqual([]);

      // The operator runs exactly what the page shows.
      const confirmed = await harness.operator(command.split(" ").slice(1));
      expect(confirmed.code, confirmed.stderr).toBe(0);
      await page.reload();
      await page
        .getByRole("region", { name: "Email domains" })
        .getByText("console.test: the single sign-on button finds this organization")
        .waitFor();
      const found = await harness.api("POST", "/api/v1/auth/sso/discover", {
        body: { email: "a@console.test" },
      });
      expect(found.body.connections).toHaveLength(1);
    });
  }, 60_000);

  test("the administration pages pass the accessibility checks on a phone in dark mode", async () => {
    const page = await harness.newPage({ width: 390, height: 844, colorScheme: "dark" });
    await withScreenshotOnFailure(page, "admin phone dark", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/users", "Users");
      await userRow(page, OLIVE.name).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await open(page, "/audit", "Audit log");
      await page.getByRole("table", { name: /^Audit log,/ }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await open(page, "/settings", "Organization settings");
      await page.getByLabel("Issuer URL").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await open(page, "/account", "Your account");
      await page.getByRole("button", { name: "Set up an authenticator app" }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("the admin sets up an authenticator app, signs in with it, and requires MFA of everyone", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin account totp", async () => {
      await signInThroughForm(page, harness.origin);
      await open(page, "/account", "Your account");
      await page.getByText(ADMIN.email).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      const { nextCode, recoveryCodes } = await setUpAuthenticatorApp(page);
      adminRecoveryCodes.push(...recoveryCodes);
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.getByRole("button", { name: "I have saved them" }).click();
      await page.getByRole("button", { name: "Remove Authenticator app" }).waitFor();
      await page.getByText("10 unused codes left").waitFor();
      const status = await harness.api("GET", "/api/v1/users/me", { token: adminToken });
      expect(status.body.mfa_enabled).toBe(true);

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      const code = await nextCode();
      await signInThroughForm(page, harness.origin, ADMIN, () => code);

      await open(page, "/settings", "Organization settings");
      await page.getByRole("checkbox", { name: "Require multi-factor authentication" }).check();
      await page.getByRole("button", { name: "Save organization" }).click();
      await page.getByText("Organization saved").waitFor();
      const organization = await harness.api("GET", "/api/v1/organizations/current", { token: adminToken });
      expect(organization.body.require_mfa).toBe(true);
    });
  }, 90_000);

  test("a user without a factor is sent to set one up, then signs in again with it", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin mfa required", async () => {
      await signInThroughForm(page, harness.origin, OLIVE);
      await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
      await page.getByText("Your organization requires multi-factor authentication").waitFor();
      // Nothing else opens until a factor is set up: the console comes back here.
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" }).click();
      await page.waitForURL(/\/console\/account$/);
      expect(await page.locator("main h1").textContent()).toBe("Your account");
      expect(await accessibilityViolations(page)).toEqual([]);

      const { nextCode } = await setUpAuthenticatorApp(page);
      await page.getByText("Your second factor is set up").waitFor();
      await page.getByRole("button", { name: "Sign in again" }).click();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();

      const code = await nextCode();
      await signInThroughForm(page, harness.origin, OLIVE, () => code);
      await open(page, "/audit", "Audit log");
      await page
        .getByRole("table", { name: /^Audit log,/ })
        .getByText("mfa.totp_confirm")
        .first()
        .waitFor();
    });
  }, 90_000);

  test("the admin signs in with a recovery code and removes a user's lost second factors", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin mfa reset", async () => {
      await page.goto(`${harness.origin}/console/`);
      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("button", { name: "Use a recovery code" }).click();
      await page.getByLabel("Recovery code").fill(adminRecoveryCodes[0] ?? "");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await open(page, "/account", "Your account");
      await page.getByText("9 unused codes left").waitFor();

      await open(page, "/users", "Users");
      const olive = userRow(page, OLIVE.name);
      await olive.getByRole("cell", { name: "On", exact: true }).waitFor();
      await olive.getByRole("button", { name: `Remove second factors of ${OLIVE.name}` }).click();
      const reset = page.getByRole("dialog", { name: `Remove ${OLIVE.name}'s second factors?` });
      await reset.getByText("lost phone").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await reset.getByRole("button", { name: "Remove second factors" }).click();
      await reset.waitFor({ state: "hidden" });
      await olive.getByRole("cell", { name: "Off", exact: true }).waitFor();
      const list = await harness.api("GET", "/api/v1/users?page_size=100", { token: adminToken });
      const stored = (list.body.data as { email: string; mfa_enabled: boolean }[]).find(
        (user) => user.email === OLIVE.email,
      );
      expect(stored?.mfa_enabled).toBe(false);
      // The admin's own row offers no reset: their factors go one by one, with their password.
      expect(
        await userRow(page, "(you)")
          .getByRole("button", { name: /second factors/ })
          .count(),
      ).toBe(0);
    });
  }, 60_000);

  test("the admin adds a passkey, and removes it only with the right password", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "admin passkey", async () => {
      // Chromium's virtual authenticator (DevTools protocol) stands in for a security key.
      const devtools = await page.context().newCDPSession(page);
      await devtools.send("WebAuthn.enable");
      await devtools.send("WebAuthn.addVirtualAuthenticator", {
        options: {
          protocol: "ctap2",
          transport: "usb",
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await page.goto(`${harness.origin}/console/`);
      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("button", { name: "Use a recovery code" }).click();
      await page.getByLabel("Recovery code").fill(adminRecoveryCodes[1] ?? "");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await open(page, "/account", "Your account");

      await page.getByLabel("Passkey name").fill("Desk key");
      await page.getByRole("button", { name: "Add a passkey" }).click();
      await page.getByRole("button", { name: "Remove Desk key" }).waitFor();
      const methods = await harness.api("GET", "/api/v1/auth/mfa", { token: adminToken });
      expect(methods.body.methods.map((method: { name: string }) => method.name)).toContain("Desk key");

      await page.getByRole("button", { name: "Remove Desk key" }).click();
      const remove = page.getByRole("dialog", { name: "Remove Desk key?" });
      await remove.getByLabel("Your password").fill("not-the-password");
      await remove.getByRole("button", { name: "Remove" }).click();
      await remove.getByText("incorrect password").waitFor();
      expect(await remove.getByLabel("Your password").getAttribute("aria-invalid")).toBe("true");
      expect(await accessibilityViolations(page)).toEqual([]);
      await remove.getByLabel("Your password").fill(ADMIN.password);
      await remove.getByRole("button", { name: "Remove" }).click();
      await remove.waitFor({ state: "hidden" });
      await page.getByRole("button", { name: "Remove Desk key" }).waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Remove Authenticator app" }).waitFor();
    });
  }, 60_000);
});
