/**
 * The console's policy pages in Chromium against the built executable: the editor (a setting the server's
 * validation refuses is shown beside it and blocks saving; fixed, it saves, and an edit shows up as version
 * 2 in History with what changed), an edit that lost a race, a policy made from a template, the default
 * moved to another policy, and deletion with where the devices went. Data is set up through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Locator, Page } from "playwright-core";
import {
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";

let harness: ConsoleHarness;
let adminToken: string;
/** A policy that one enrolled device follows, to delete. */
let retiredPolicyId: string;

async function createPolicy(name: string, policyData: unknown = {}): Promise<string> {
  const answer = await harness.api("POST", "/api/v1/policies", {
    token: adminToken,
    body: { name, policy_data: policyData },
  });
  if (answer.status !== 201) throw new Error(`creating ${name} failed: ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

async function policyNames(): Promise<string[]> {
  const answer = await harness.api("GET", "/api/v1/policies?page_size=100", { token: adminToken });
  return (answer.body.data as { name: string }[]).map((policy) => policy.name);
}

beforeAll(async () => {
  harness = await startConsoleHarness();
  adminToken = await harness.adminToken();
  retiredPolicyId = await createPolicy("Retired kiosks");
  const created = await harness.api("POST", "/api/v1/enrollment-tokens", { token: adminToken, body: {} });
  const enrolled = await harness.api("POST", "/api/v1/devices/enroll", {
    body: {
      enrollment_token: created.body.token,
      device_name: "Lobby kiosk",
      platform: "linux",
      agent_version: "1.4.0",
      hardware_id: `HW-${crypto.randomUUID()}`,
    },
  });
  expect(enrolled.status).toBe(201);
  const assigned = await harness.api("PUT", `/api/v1/devices/${enrolled.body.id}/policy`, {
    token: adminToken,
    body: { policy_id: retiredPolicyId },
  });
  expect(assigned.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

/** What a screen reader reads after a control's name: its hint and its error (aria-describedby). */
function descriptionOf(control: Locator): Promise<string> {
  return control.evaluate((element) =>
    (element.getAttribute("aria-describedby") ?? "")
      .split(/\s+/)
      .map((id) => document.getElementById(id)?.textContent ?? "")
      .join(" "),
  );
}

/** Whether focus reaches the control; the page moves it after rendering, so this waits up to 5 s. */
async function isFocused(control: Locator): Promise<boolean> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (await control.evaluate((element) => element === document.activeElement)) return true;
    await Bun.sleep(50);
  }
  return false;
}

async function openPolicies(page: Page) {
  await page.goto(`${harness.origin}/console/policies`);
  await page.getByRole("heading", { level: 1, name: "Policies" }).waitFor();
  await page.getByRole("table", { name: /^Policies, page/ }).waitFor();
}

/** The word "Default" that marks the organization default in a row of the list (not the name "Default policy"). */
function defaultMarks(row: Locator) {
  return row.getByText(/^\W*Default$/);
}

/** The History tab's card of one version. */
function versionCard(page: Page, version: number) {
  return page.getByRole("article", { name: new RegExp(`^Version ${version}\\b`) });
}

describe("console policies", () => {
  test("the editor says what each platform does with each setting, warns of a wildcard Linux cannot block, and edits the work paths", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "policies platforms", async () => {
      await signInThroughForm(page, harness.origin);
      await page.goto(`${harness.origin}/console/policies/new`);
      await page.getByRole("heading", { level: 1, name: "New policy" }).waitFor();
      const support = (path: string) => page.locator(`.platform-support[data-setting="${path}"]`);
      // From the table the agent plans by: DLP is not enforced on Linux, blocked domains are, with why.
      expect(await support("dlp.screenshot_allowed").innerText()).toStartWith(
        "Linux: not enforced (screenshots: Linux has no system-wide control for this",
      );
      expect(await support("network.blocked_domains").innerText()).toContain(
        "Linux: enforced (each exact name",
      );
      expect(await support("usb.allowed").innerText()).toContain(
        "Windows: enforced (the device-installation restriction policy",
      );
      expect(await support("dlp.screenshot_allowed").innerText()).toContain("Windows: not enforced");
      expect(await support("usb.allowed").innerText()).toContain(
        "macOS: not enforced (USB devices are not blocked",
      );
      expect(await support("dlp.screenshot_allowed").innerText()).toContain(
        "macOS: enforced once the user approves it (a configuration profile",
      );
      // Phones without an agent: what their profile or tunnel carries.
      expect(await support("dlp.screenshot_allowed").innerText()).toContain(
        "iOS (VPN profile): enforced while the profile is installed (the profile's restrictions payload",
      );
      expect(await support("usb.allowed").innerText()).toContain(
        "Android (VPN profile): not enforced (phones have no USB device policy",
      );
      const blocked = page.getByLabel("Blocked domains");
      await blocked.fill("tracker.example.net\n*.ads.example.com");
      await support("network.blocked_domains")
        .getByText("On Linux, Windows and macOS *.ads.example.com is not blocked")
        .waitFor();

      await page.getByLabel("Name", { exact: true }).fill("Engineering laptops");
      const workPaths = page.getByLabel("Work paths");
      expect(await workPaths.inputValue()).toBe("~/Work");
      await workPaths.fill("~/Work\n~/.config/Slack\n/etc/secrets");
      // The server refuses a system folder, on its line.
      await page.getByRole("link", { name: /^Work paths: Line 3/ }).waitFor();
      await workPaths.fill("~/Work\n~/.config/Slack");
      await page.getByText("The settings are valid.").waitFor();
      await page.getByRole("button", { name: "Create policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Engineering laptops" }).waitFor();
      const list = await harness.api("GET", "/api/v1/policies?page_size=100", { token: adminToken });
      const created = (list.body.data as { id: string; name: string }[]).find(
        (policy) => policy.name === "Engineering laptops",
      );
      const policy = await harness.api("GET", `/api/v1/policies/${created?.id}`, { token: adminToken });
      expect(policy.body.policy_data.wipe).toEqual({ work_paths: ["~/Work", "~/.config/Slack"] });
      expect(policy.body.policy_data.network.blocked_domains).toEqual([
        "tracker.example.net",
        "*.ads.example.com",
      ]);
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("the editor shows the server's validation beside the setting, refuses to save, then saves; an edit is version 2 in History", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "policies editor", async () => {
      await signInThroughForm(page, harness.origin);
      await openPolicies(page);
      const defaultRow = page
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: "Default policy" }) });
      expect(await defaultMarks(defaultRow).count()).toBe(1);
      await page.getByRole("heading", { name: "Templates" }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByRole("link", { name: "New policy" }).click();
      await page.getByRole("heading", { level: 1, name: "New policy" }).waitFor();
      // It starts from the balanced template: its USB classes are filled in.
      const classes = page.getByLabel("Allowed USB device classes");
      expect(await classes.inputValue()).toContain("hid");

      await page.getByLabel("Name", { exact: true }).fill("Finance laptops");
      const patterns = page.getByLabel("Sensitive data patterns");
      const acmeId = String.raw`\bACME-\d{6}\b`;
      await patterns.fill(`${acmeId}\n([a-z`);
      // The pattern is not RE2: the server's message, on the line that is wrong, under the textarea.
      await page.getByRole("link", { name: /^Sensitive data patterns: Line 2 \(“\(\[a-z”\)/ }).waitFor();
      expect(await patterns.getAttribute("aria-invalid")).toBe("true");
      expect(await descriptionOf(patterns)).toMatch(
        /Line 2 \(“\(\[a-z”\): is not RE2 syntax: missing closing \]/,
      );

      // Saving is refused: the summary takes focus, nothing is created.
      await page.getByRole("button", { name: "Create policy" }).click();
      const summary = page.getByRole("region", { name: "There is a problem with this policy" });
      await summary.waitFor();
      expect(await isFocused(summary)).toBe(true);
      expect(page.url()).toEndWith("/console/policies/new");
      expect(await policyNames()).not.toContain("Finance laptops");
      await page.getByRole("link", { name: /^Sensitive data patterns: Line 2/ }).click();
      expect(await isFocused(patterns)).toBe(true);
      expect(await accessibilityViolations(page)).toEqual([]);

      await patterns.fill(acmeId);
      await page.getByText("The settings are valid.").waitFor();
      expect(await patterns.getAttribute("aria-invalid")).toBeNull();
      await page.getByRole("button", { name: "Create policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Finance laptops" }).waitFor();
      expect(await versionCard(page, 1).textContent()).toContain("Created");
      expect(await policyNames()).toContain("Finance laptops");

      // An edit: a malformed USB id is refused beside its field, then a good one saves as version 2.
      await page.getByRole("link", { name: "Edit", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Edit Finance laptops" }).waitFor();
      await page.getByLabel("Screenshots allowed").uncheck();
      const whitelist = page.getByLabel("Allowed USB devices", { exact: true });
      await whitelist.fill("zz:1");
      await page.getByRole("link", { name: /^Allowed USB devices: Line 1 \(“zz:1”\)/ }).waitFor();
      expect(await descriptionOf(whitelist)).toContain("must be vendor:product with four hex digits each");
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.getByRole("region", { name: "There is a problem with this policy" }).waitFor();
      const stored = await harness.api("GET", "/api/v1/policies?page_size=100", { token: adminToken });
      expect(
        stored.body.data.find((policy: { name: string }) => policy.name === "Finance laptops").version,
      ).toBe(1);

      await whitelist.fill("046d:c52b");
      await page.getByText("The settings are valid.").waitFor();
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.getByRole("heading", { level: 1, name: "Finance laptops" }).waitFor();
      const version2 = versionCard(page, 2);
      await version2.waitFor();
      const changes = await version2.getByRole("list", { name: "Changes in version 2" }).textContent();
      expect(changes).toContain("Screenshots allowed (dlp.screenshot_allowed): true → false");
      expect(changes).toContain("Allowed USB devices (usb.whitelist): + added “046d:c52b”");
      expect(await accessibilityViolations(page)).toEqual([]);

      // Version 1's whole document, as it was.
      await page.getByRole("button", { name: "View version 1" }).click();
      const dialog = page.getByRole("dialog", { name: "Version 1" });
      await dialog.getByRole("heading", { name: "Data loss prevention" }).waitFor();
      expect(await dialog.textContent()).toContain("Screenshots allowedYes");
      await dialog.getByRole("button", { name: "Close" }).click();
      await dialog.waitFor({ state: "hidden" });
    });
  }, 60_000);

  test("saving over a version someone else saved meanwhile is refused, and reloading shows theirs", async () => {
    const id = await createPolicy("Shared laptops");
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "policies conflict", async () => {
      await signInThroughForm(page, harness.origin);
      await page.goto(`${harness.origin}/console/policies/${id}/edit`);
      await page.getByRole("heading", { level: 1, name: "Edit Shared laptops" }).waitFor();
      const other = await harness.api("PUT", `/api/v1/policies/${id}`, {
        token: adminToken,
        body: { policy_data: { storage: { max_file_size_mb: 5 } } },
      });
      expect(other.body.version).toBe(2);
      await page.getByLabel("Printing allowed").uncheck();
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.getByText("Someone else changed this policy while you were editing it.").waitFor();
      await page.getByRole("button", { name: "Reload the latest version" }).click();
      await page.getByText("Version 2. Saving creates version 3").waitFor();
      expect(await page.getByLabel("Largest file transfer (MB)").inputValue()).toBe("5");
      expect(await page.getByLabel("Printing allowed").isChecked()).toBe(true);
    });
  }, 60_000);

  test("a template becomes a policy; another policy becomes the default; a policy is deleted and its devices fall back", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "policies templates default delete", async () => {
      await signInThroughForm(page, harness.origin);
      await openPolicies(page);
      await page.getByRole("button", { name: "Use this template (Strict)" }).click();
      const dialog = page.getByRole("dialog", { name: "New policy from Strict" });
      const name = dialog.getByLabel("Name of the new policy");
      await name.fill("Default policy");
      await dialog.getByRole("button", { name: "Create policy" }).click();
      await dialog.getByText("a policy with this name already exists: choose another name").waitFor();
      expect(await name.getAttribute("aria-invalid")).toBe("true");
      await name.fill("Trading floor");
      await dialog.getByRole("button", { name: "Create policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Trading floor" }).waitFor();
      const settings = page.getByRole("region", { name: "Settings" });
      expect(await settings.textContent()).toContain("Screenshots allowedNo");

      // The default can't be deleted: the refusal says why and what to do.
      await page.goto(`${harness.origin}/console/policies`);
      await page.getByRole("link", { name: "Default policy" }).first().click();
      await page.getByRole("heading", { level: 1, name: "Default policy" }).waitFor();
      await page.getByRole("button", { name: "Delete…" }).click();
      const refusal = page.getByRole("dialog", { name: "Delete “Default policy”?" });
      await refusal.getByRole("button", { name: "Delete policy" }).click();
      await refusal.getByText("This is the organization default policy, so it can't be deleted.").waitFor();
      await refusal.getByRole("button", { name: "Cancel" }).click();

      // Trading floor becomes the default.
      await page.goto(`${harness.origin}/console/policies`);
      await page.getByRole("link", { name: "Trading floor" }).click();
      await page.getByRole("heading", { level: 1, name: "Trading floor" }).waitFor();
      await page.getByRole("button", { name: "Set as default" }).click();
      const question = page.getByRole("dialog", { name: "Make “Trading floor” the default?" });
      expect(await question.textContent()).toContain("instead of “Default policy”");
      await question.getByRole("button", { name: "Make it the default" }).click();
      await page
        .getByText("The organization default: devices without a policy of their own follow it.")
        .waitFor();
      expect(await page.getByRole("button", { name: "Set as default" }).count()).toBe(0);
      await openPolicies(page);
      const tradingRow = page
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: "Trading floor" }) });
      expect(await defaultMarks(tradingRow).count()).toBe(1);
      const oldRow = page
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: "Default policy" }) });
      expect(await defaultMarks(oldRow).count()).toBe(0);

      // Retired kiosks has a device: its Devices tab lists it; deleting sends it to the new default.
      await page.goto(`${harness.origin}/console/policies/${retiredPolicyId}`);
      await page.getByRole("heading", { level: 1, name: "Retired kiosks" }).waitFor();
      await page.getByRole("tab", { name: "History" }).focus();
      await page.keyboard.press("ArrowRight");
      expect(await page.getByRole("tab", { name: "Devices (1)" }).getAttribute("aria-selected")).toBe("true");
      const devices = page.getByRole("table", { name: /^Devices following this policy/ });
      await devices.getByRole("link", { name: "Lobby kiosk" }).waitFor();
      expect(await devices.textContent()).toContain("Online");
      await page.getByRole("button", { name: "Delete…" }).click();
      const confirm = page.getByRole("dialog", { name: "Delete “Retired kiosks”?" });
      expect(await confirm.textContent()).toContain(
        "Its 1 device will follow the organization default policy",
      );
      await confirm.getByRole("button", { name: "Delete policy" }).click();
      await page.getByRole("heading", { level: 1, name: "Policies" }).waitFor();
      await page
        .getByText(
          "Policy “Retired kiosks” deleted. 1 device that followed it now follows Trading floor, the organization default.",
        )
        .waitFor();
      expect(await page.getByRole("link", { name: "Retired kiosks" }).count()).toBe(0);
      const device = await harness.api("GET", "/api/v1/policies/default", { token: adminToken });
      expect(device.body.name).toBe("Trading floor");
    });
  }, 60_000);

  test("the editor with an error shown has no accessibility violations on a phone in dark mode", async () => {
    const page = await harness.newPage({ colorScheme: "dark" });
    await withScreenshotOnFailure(page, "policies phone dark", async () => {
      // Signed in at desktop width, where the helper finds the navigation it waits for (a phone hides it).
      await signInThroughForm(page, harness.origin);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${harness.origin}/console/policies/new`);
      await page.getByRole("heading", { level: 1, name: "New policy" }).waitFor();
      await page.getByLabel("Blocked domains").fill("pastebin.com\nnot a domain");
      await page.getByRole("link", { name: /^Blocked domains: Line 2/ }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);
});
