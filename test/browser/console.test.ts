/**
 * An administrator's day in the console, end to end, in Chromium against the built executable: sign in
 * with a password and an authenticator code, see a newly enrolled laptop on the dashboard and in the
 * list, open it, fix a policy the server refuses, see the new version in its history, wipe the laptop
 * and watch it become wiped when its agent reports (and leave the dashboard's compliance counts), and
 * read all of it in the audit log. The pages' own suites (console-*.test.ts) go deeper; this one is the
 * path through them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import {
  ADMIN,
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";
import { totpCode } from "../helpers/totp";

let harness: ConsoleHarness;
let page: Page;
let totpSecret: string;
let laptop: { id: string; token: string };

beforeAll(async () => {
  harness = await startConsoleHarness();
  const token = await harness.adminToken();
  // The admin has an authenticator app: signing in takes its code too.
  const enrolment = await harness.api("POST", "/api/v1/auth/mfa/totp", { token });
  totpSecret = enrolment.body.secret;
  const confirmed = await harness.api("POST", "/api/v1/auth/mfa/totp/confirm", {
    token,
    body: { code: totpCode(totpSecret, new Date()) },
  });
  expect(confirmed.status).toBe(200);
  page = await harness.newPage();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

/** What a script or an imaging station does: an enrollment token, then the laptop enrolls and reports. */
async function enrollLaptop(): Promise<void> {
  const token = await harness.adminToken();
  const created = await harness.api("POST", "/api/v1/enrollment-tokens", { token, body: {} });
  const enrolled = await harness.api("POST", "/api/v1/devices/enroll", {
    body: {
      enrollment_token: created.body.token,
      device_name: "Grace's ThinkPad",
      platform: "linux",
      agent_version: "1.4.0",
      hardware_id: "PF-3X9Q2K",
      os_version: "6.8",
    },
  });
  expect(enrolled.status).toBe(201);
  laptop = { id: enrolled.body.id, token: enrolled.body.device_token };
}

test("sign in with an authenticator code, see an enrolled laptop, fix a policy, wipe the laptop, read the audit log", async () => {
  await withScreenshotOnFailure(page, "console end to end", async () => {
    // The code of the next time step: the one confirmed above may not be used twice.
    await signInThroughForm(page, harness.origin, ADMIN, () => totpCode(totpSecret, new Date(), 1));
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();

    await enrollLaptop();
    await page.reload();
    await page.getByRole("link", { name: /Online\s+1\s+devices/ }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    // The list, then the laptop's own page.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Devices" }).click();
    await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
    await page.getByRole("link", { name: "Grace's ThinkPad" }).click();
    await page.getByRole("heading", { level: 1, name: "Grace's ThinkPad" }).waitFor();
    await page.locator(".page-header").getByText("Online").waitFor();

    // The default policy, edited with a pattern the server cannot compile: refused beside the setting.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policies" }).click();
    await page.getByRole("link", { name: "Default policy" }).first().click();
    await page.getByRole("heading", { level: 1, name: "Default policy" }).waitFor();
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    const patterns = page.getByLabel("Sensitive data patterns");
    await patterns.fill("card-[0-9]{16}\n(unclosed");
    await page.getByRole("link", { name: /^Sensitive data patterns: Line 2/ }).waitFor();
    expect(await patterns.getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("region", { name: "There is a problem with this policy" }).waitFor();
    const unchanged = await harness.api("GET", "/api/v1/policies/default", {
      token: await harness.adminToken(),
    });
    expect(unchanged.body.version).toBe(1);

    // Fixed and saved: version 2, and its history names the setting.
    await patterns.fill("card-[0-9]{16}");
    await page.getByText("The settings are valid.").waitFor();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("heading", { level: 1, name: "Default policy" }).waitFor();
    const version2 = page.getByRole("article", { name: /^Version 2\b/ });
    expect(await version2.textContent()).toContain("sensitive_data_patterns");

    // The wipe: confirmed by typing the laptop's name, pending until the agent reports it done.
    await page.goto(`${harness.origin}/console/devices/${laptop.id}`);
    await page.getByRole("heading", { level: 1, name: "Grace's ThinkPad" }).waitFor();
    await page.getByRole("button", { name: "Wipe…" }).click();
    const dialog = page.getByRole("dialog", { name: "Wipe Grace's ThinkPad?" });
    await dialog.getByLabel("Reason").fill("Laptop lost on a train");
    await dialog.getByLabel("Type Grace's ThinkPad to confirm").fill("Grace's ThinkPad");
    await dialog.getByRole("button", { name: "Wipe device" }).click();
    const progress = page.getByRole("region", { name: "Wipe in progress" });
    await progress.getByRole("status").filter({ hasText: "Pending" }).waitFor();

    const checkIn = await harness.api("POST", "/api/v1/agent/checkin", { token: laptop.token, body: {} });
    const command = (checkIn.body.commands as { type: string; wipe_id: string }[]).find(
      (c) => c.type === "wipe",
    );
    expect(command).toBeDefined();
    const done = await harness.api("POST", `/api/v1/agent/wipes/${command?.wipe_id}/complete`, {
      token: laptop.token,
      body: { success: true },
    });
    expect(done.status).toBe(200);
    await page
      .getByRole("region", { name: "Latest wipe" })
      .getByRole("status")
      .filter({ hasText: "Completed" })
      .waitFor({ timeout: 20_000 });
    await page.locator(".page-header").getByText("Wiped").waitFor();

    // The audit log tells the story: the sign-in, the policy change, the wipe.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    for (const action of ["device.wipe", "policy.update", "auth.login"])
      await page
        .getByRole("cell", { name: new RegExp(action.replace(".", "\\.")) })
        .first()
        .waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    // On a phone, in the dark: the navigation is a menu that closes once a page is chosen, and the
    // dashboard (whose events table scrolls sideways there) is still usable by keyboard.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Dashboard" }).click();
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).waitFor({ state: "hidden" });
    // The wiped laptop counts under Wiped, and in no compliance count: it is not managed any more.
    await page.getByRole("link", { name: /^Wiped\s+1\s+devices/ }).waitFor();
    await page
      .getByRole("heading", {
        level: 2,
        name: "Devices by compliance (0 managed; wiped devices are not counted)",
      })
      .waitFor();
    for (const compliance of ["Compliant", "Non-compliant", "Unknown"])
      await page.getByRole("link", { name: new RegExp(`^${compliance}\\s+0\\s+devices`) }).waitFor();
    await page.getByText("Every device that reported is compliant.").waitFor();
    await page.getByRole("region", { name: "The ten latest audit log entries" }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("link", { name: "Your account" }).click();
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
  });
}, 90_000);
