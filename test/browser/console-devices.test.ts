/**
 * The console's device pages in Chromium against the built executable: the list (search, filters, paging,
 * bulk suspend), a non-compliant device's violations, and a wipe from the dialog to its completion by the
 * agent, then deletion. Data is set up through the API, as an agent and a script would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import {
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";

let harness: ConsoleHarness;
let adminToken: string;
/** The device tokens of the named devices, for their agents' check-ins. */
const agents = new Map<string, { id: string; token: string }>();

const COMPLIANT_FACTS = {
  disk_encrypted: true,
  vpn_connected: true,
  screen_lock_enabled: true,
  firewall_enabled: true,
  usb_storage_blocked: true,
  usb_devices_blocked: true,
  screenshots_blocked: true,
};

async function enroll(enrollmentToken: string, name: string, platform: string, osVersion: string) {
  const answer = await harness.api("POST", "/api/v1/devices/enroll", {
    body: {
      enrollment_token: enrollmentToken,
      device_name: name,
      platform,
      agent_version: "1.4.0",
      hardware_id: `HW-${crypto.randomUUID()}`,
      os_version: osVersion,
    },
  });
  if (answer.status !== 201) throw new Error(`enrolling ${name} failed: ${JSON.stringify(answer.body)}`);
  agents.set(name, { id: answer.body.id, token: answer.body.device_token });
}

async function checkIn(name: string, facts: Record<string, boolean>, report: Record<string, unknown> = {}) {
  const agent = agents.get(name);
  const answer = await harness.api("POST", "/api/v1/agent/checkin", {
    token: agent?.token,
    body: { facts, ...report },
  });
  if (answer.status !== 200) throw new Error(`check-in of ${name} failed: ${JSON.stringify(answer.body)}`);
  return answer.body as { commands: { type: string; wipe_id: string }[] };
}

beforeAll(async () => {
  harness = await startConsoleHarness();
  adminToken = await harness.adminToken();
  const created = await harness.api("POST", "/api/v1/enrollment-tokens", {
    token: adminToken,
    body: { max_uses: null },
  });
  const enrollmentToken = created.body.token as string;
  // 25 others first, so that the named devices (newest first) are on page 1 and the list has a page 2.
  for (let index = 1; index <= 25; index++) {
    await enroll(enrollmentToken, `Fleet node ${String(index).padStart(2, "0")}`, "linux", "6.8");
  }
  await enroll(enrollmentToken, "Atlas laptop", "macos", "14.4");
  await enroll(enrollmentToken, "Borealis phone", "android", "14");
  await enroll(enrollmentToken, "Cirrus desktop", "windows", "11");
  await enroll(enrollmentToken, "Dover tablet", "ios", "17.1");
  // The default policy (balanced) requires disk encryption: Borealis breaks that rule.
  // It also reports a fact under a name the server does not know, and what it enforced.
  await checkIn(
    "Borealis phone",
    { ...COMPLIANT_FACTS, disk_encrypted: false, diskEncrypted: true },
    {
      enforcement: [
        { setting: "usb.allowed", outcome: "enforced" },
        { setting: "dlp.screenshot_allowed", outcome: "unsupported", detail: "no screenshot hook here" },
        { setting: "tunnel", outcome: "failed", detail: "wg-quick up: permission denied" },
      ],
    },
  );
  await checkIn("Atlas laptop", COMPLIANT_FACTS);
  const suspended = await harness.api("PUT", `/api/v1/devices/${agents.get("Fleet node 07")?.id}/status`, {
    token: adminToken,
    body: { status: "suspended", reason: "Reported stolen" },
  });
  expect(suspended.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

/** The device table's rows (the header row excepted). */
function deviceRows(page: Page) {
  return page.getByRole("table", { name: /^Devices, page/ }).locator("tbody tr");
}

async function openDevices(page: Page, query = "") {
  await page.goto(`${harness.origin}/console/devices${query}`);
  await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
}

describe("console devices", () => {
  test("the list shows the devices, searches by name, filters by status and compliance, and pages", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "devices list", async () => {
      await signInThroughForm(page, harness.origin);
      await openDevices(page);
      for (const name of ["Atlas laptop", "Borealis phone", "Cirrus desktop", "Dover tablet"]) {
        await page.getByRole("link", { name, exact: true }).waitFor();
      }
      expect(await deviceRows(page).count()).toBe(25);
      const borealis = deviceRows(page).filter({ has: page.getByRole("link", { name: "Borealis phone" }) });
      expect(await borealis.textContent()).toContain("Non-compliant");
      expect(await borealis.textContent()).toContain("Android");
      expect(await accessibilityViolations(page)).toEqual([]);

      // Paging: 29 devices at 25 a page; the page is in the URL, so a reload stays on it.
      await page.getByText("Page 1 of 2", { exact: true }).waitFor();
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByText("Page 2 of 2", { exact: true }).waitFor();
      await page.getByRole("link", { name: "Fleet node 01" }).waitFor();
      expect(await deviceRows(page).count()).toBe(4);
      expect(page.url()).toContain("page=2");
      await page.reload();
      await page.getByText("Page 2 of 2", { exact: true }).waitFor();
      expect(await deviceRows(page).count()).toBe(4);

      // Search by part of the name, in any case: one device, and back to page 1.
      await page.getByLabel("Search by name").fill("BOREALIS");
      await page.getByRole("link", { name: "Fleet node 01" }).waitFor({ state: "detached" });
      await page.getByRole("link", { name: "Borealis phone" }).waitFor();
      expect(await deviceRows(page).count()).toBe(1);
      expect(page.url()).toContain("q=BOREALIS");
      expect(page.url()).not.toContain("page=");

      // Status: only the suspended device.
      await page.getByLabel("Search by name").fill("");
      await page.getByRole("link", { name: "Atlas laptop" }).waitFor();
      await page.getByLabel("Status").selectOption("suspended");
      await page.getByRole("link", { name: "Atlas laptop" }).waitFor({ state: "detached" });
      expect(await deviceRows(page).allTextContents()).toEqual([expect.stringContaining("Fleet node 07")]);
      expect(await deviceRows(page).first().textContent()).toContain("Suspended");

      // Compliance, kept through a reload: only the device that broke a rule.
      await page.getByLabel("Status").selectOption("");
      await page.getByLabel("Compliance").selectOption("non_compliant");
      await page.getByRole("link", { name: "Fleet node 07" }).waitFor({ state: "detached" });
      await page.reload();
      expect(await page.getByLabel("Compliance").inputValue()).toBe("non_compliant");
      await page.getByRole("link", { name: "Borealis phone" }).waitFor();
      expect(await deviceRows(page).count()).toBe(1);

      // A filter that matches nothing says so.
      await page.getByLabel("Search by name").fill("no such device");
      await page.getByText("No devices match these filters").waitFor();
    });
  }, 60_000);

  test("two selected devices are suspended together with a reason", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "devices bulk suspend", async () => {
      await signInThroughForm(page, harness.origin);
      await openDevices(page);
      await page.getByRole("checkbox", { name: "Select Atlas laptop" }).check();
      await page.getByRole("checkbox", { name: "Select Cirrus desktop" }).check();
      const bar = page.getByRole("region", { name: "Bulk actions" });
      await bar.getByText("2 devices selected").waitFor();
      await bar.getByRole("button", { name: "Suspend…", exact: true }).click();

      const dialog = page.getByRole("dialog", { name: "Suspend 2 devices?" });
      await dialog.getByText("Atlas laptop").waitFor();
      await dialog.getByLabel("Reason").fill("Quarterly audit");
      await dialog.getByRole("button", { name: "Suspend 2 devices" }).click();

      await page.getByRole("heading", { name: "Suspend: 2 succeeded, 0 failed" }).waitFor();
      for (const name of ["Atlas laptop", "Cirrus desktop"]) {
        const row = deviceRows(page).filter({ has: page.getByRole("link", { name, exact: true }) });
        await row.getByText("Suspended").waitFor();
      }
      const untouched = deviceRows(page).filter({ has: page.getByRole("link", { name: "Borealis phone" }) });
      expect(await untouched.textContent()).toContain("Online");

      const atlas = await harness.api("GET", `/api/v1/devices/${agents.get("Atlas laptop")?.id}`, {
        token: adminToken,
      });
      expect(atlas.body.status).toBe("suspended");
      expect(atlas.body.suspended_reason).toBe("Quarterly audit");
    });
  }, 60_000);

  test("a non-compliant device shows the rule it breaks", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "device compliance", async () => {
      await signInThroughForm(page, harness.origin);
      await openDevices(page);
      await page.getByRole("link", { name: "Borealis phone" }).click();
      await page.getByRole("heading", { level: 1, name: "Borealis phone" }).waitFor();
      const violations = page.getByRole("table", { name: /rules the device does not meet/ });
      const rule = violations.getByRole("row").filter({ hasText: "storage.encryption_required" });
      await rule.waitFor();
      expect(await rule.getByRole("cell").allTextContents()).toEqual([
        expect.stringContaining("Disk encrypted"),
        "Yes",
        "No",
        expect.stringContaining("Critical"),
      ]);
      await page.getByRole("link", { name: "Default policy" }).waitFor();
      await page
        .getByRole("list", { name: /^Activity/ })
        .getByText("Checked in")
        .waitFor();
      // What the agent reported: its facts, the one this server does not know, and its enforcement.
      const report = page.getByRole("region", { name: "Reported by the agent" });
      await report.getByText("USB storage blocked").waitFor();
      await report.getByText("Not known to this server").waitFor();
      await report.getByText("diskEncrypted").waitFor();
      const enforcement = page.getByRole("table", { name: /what the agent did with it/ });
      const rows = enforcement.locator("tbody tr");
      expect(await rows.count()).toBe(3);
      expect(await rows.nth(1).getByRole("cell").allTextContents()).toEqual([
        "dlp.screenshot_allowed",
        expect.stringContaining("Unsupported"),
        "no screenshot hook here",
      ]);
      expect(await rows.nth(2).getByRole("cell").allTextContents()).toEqual([
        "tunnel",
        expect.stringContaining("Failed"),
        "wg-quick up: permission denied",
      ]);
      expect(await rows.nth(0).textContent()).toContain("Enforced");
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("a wipe asked in the dialog completes when the agent confirms it, and the wiped device is deleted", async () => {
    const page = await harness.newPage();
    const dover = agents.get("Dover tablet");
    await withScreenshotOnFailure(page, "device wipe", async () => {
      await signInThroughForm(page, harness.origin);
      await page.goto(`${harness.origin}/console/devices/${dover?.id}`);
      await page.getByRole("heading", { level: 1, name: "Dover tablet" }).waitFor();
      await page.getByRole("button", { name: "Wipe…" }).click();

      const dialog = page.getByRole("dialog", { name: "Wipe Dover tablet?" });
      await dialog.getByLabel("Reason").fill("Left the company");
      const confirm = dialog.getByRole("button", { name: "Wipe device" });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel("Type Dover tablet to confirm").fill("Dover tablet");
      await confirm.click();

      const progress = page.getByRole("region", { name: "Wipe in progress" });
      await progress.getByRole("status").filter({ hasText: "Pending" }).waitFor();
      await progress.getByText("Left the company").waitFor();
      // Asked for is not done: nobody has been told anything yet.
      await progress.getByText("Asked for; the agent tells the people logged in first").waitFor();

      // The agent receives the command at its check-in and confirms it.
      const checkedIn = await checkIn("Dover tablet", COMPLIANT_FACTS);
      const command = checkedIn.commands.find((item) => item.type === "wipe");
      expect(command).toBeDefined();
      const completed = await harness.api("POST", `/api/v1/agent/wipes/${command?.wipe_id}/complete`, {
        token: dover?.token,
        body: {
          success: true,
          report: {
            paths: [
              { path: "/home/ann/Work", outcome: "erased", files: 3, bytes: 2048, folders: 1 },
              {
                path: "/home/ann/.config/Slack",
                outcome: "not_followed",
                files: 0,
                bytes: 0,
                folders: 0,
                detail: "/home/ann/.config is a symbolic link; not followed",
              },
            ],
            files: 3,
            bytes: 2048,
            notification: { requested: true, sessions: 0, methods: [], detail: "no one was logged in" },
          },
        },
      });
      expect(completed.status).toBe(200);

      const finished = page.getByRole("region", { name: "Latest wipe" });
      await finished.getByRole("status").filter({ hasText: "Completed" }).waitFor();
      // The console says what the agent reported, and no more.
      await finished.getByText("0 logged-in sessions shown the notice: no one was logged in").waitFor();
      await finished.getByText("3 files (2.0 KiB) in 1 of 2 work paths").waitFor();
      const rows = finished.getByRole("row");
      await rows.filter({ hasText: "/home/ann/Work" }).filter({ hasText: "Erased" }).waitFor();
      await rows.filter({ hasText: "/home/ann/.config/Slack" }).filter({ hasText: "Not followed" }).waitFor();
      await page.locator(".page-header").getByText("Wiped").waitFor();
      await page
        .getByRole("list", { name: /^Activity/ })
        .getByText("Wipe completed")
        .waitFor();

      // After a reload the page still finds the wipe (through the activity log).
      await page.reload();
      await page
        .getByRole("region", { name: "Latest wipe" })
        .getByRole("status")
        .filter({ hasText: "Completed" })
        .waitFor();

      await page.getByRole("button", { name: "Delete…" }).click();
      const deletion = page.getByRole("dialog", { name: "Delete Dover tablet?" });
      await deletion.getByRole("button", { name: "Delete device" }).click();
      await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/console/devices");
      await page.getByRole("link", { name: "Atlas laptop" }).waitFor();
      expect(await page.getByRole("link", { name: "Dover tablet" }).count()).toBe(0);
      const gone = await harness.api("GET", `/api/v1/devices/${dover?.id}`, { token: adminToken });
      expect(gone.status).toBe(404);
    });
  }, 60_000);

  test("an auditor sees the devices but no action that changes them", async () => {
    const auditor = { email: "auditor@example.com", password: "correct-horse-battery-staple" };
    const created = await harness.api("POST", "/api/v1/users", {
      token: adminToken,
      body: { ...auditor, name: "Audrey Auditor", role: "auditor" },
    });
    expect(created.status).toBe(201);
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "devices read only", async () => {
      await signInThroughForm(page, harness.origin, auditor);
      await openDevices(page);
      await page.getByRole("link", { name: "Borealis phone" }).waitFor();
      expect(await page.getByRole("checkbox").count()).toBe(0);
      expect(await page.getByRole("link", { name: "Enroll a device" }).count()).toBe(0);
      await page.getByRole("link", { name: "Borealis phone" }).click();
      await page.getByRole("heading", { level: 1, name: "Borealis phone" }).waitFor();
      await page.getByRole("region", { name: "Compliance" }).waitFor();
      await page.getByRole("link", { name: "Default policy" }).waitFor();
      for (const action of ["Edit…", "Suspend…", "Wipe…", "Retire…", "Apply policy"]) {
        expect(await page.getByRole("button", { name: action }).count()).toBe(0);
      }
    });
  }, 60_000);

  test("the list and a device page have no accessibility violations on a phone in dark mode", async () => {
    const page = await harness.newPage({ colorScheme: "dark" });
    await withScreenshotOnFailure(page, "devices phone dark", async () => {
      // Signed in at desktop width, where the helper finds the navigation it waits for (a phone hides it).
      await signInThroughForm(page, harness.origin);
      await page.setViewportSize({ width: 390, height: 844 });
      await openDevices(page);
      await page.getByRole("checkbox", { name: "Select Borealis phone" }).check();
      await page.getByRole("region", { name: "Bulk actions" }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.getByRole("link", { name: "Borealis phone" }).click();
      await page.getByRole("heading", { level: 1, name: "Borealis phone" }).waitFor();
      await page.getByRole("list", { name: /^Activity/ }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);
  test("a device is renamed and given to a user; a stolen one that never confirms its wipe is retired", async () => {
    const created = await harness.api("POST", "/api/v1/enrollment-tokens", { token: adminToken, body: {} });
    await enroll(created.body.token, "Elm laptop", "linux", "6.8");
    const elm = agents.get("Elm laptop");
    const member = await harness.api("POST", "/api/v1/users", {
      token: adminToken,
      body: {
        email: "mira@example.com",
        password: "correct-horse-battery-staple",
        name: "Mira Member",
        role: "member",
      },
    });
    expect(member.status).toBe(201);
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "device edit and retire", async () => {
      await signInThroughForm(page, harness.origin);
      await page.goto(`${harness.origin}/console/devices/${elm?.id}`);
      await page.getByRole("heading", { level: 1, name: "Elm laptop" }).waitFor();

      await page.getByRole("button", { name: "Edit…" }).click();
      const edit = page.getByRole("dialog", { name: "Edit Elm laptop" });
      await edit.getByLabel("Name").fill("Elm workstation");
      await edit.getByLabel("User").selectOption({ label: "Mira Member (mira@example.com)" });
      await edit.getByRole("button", { name: "Save" }).click();
      await page.getByRole("heading", { level: 1, name: "Elm workstation" }).waitFor();
      await page.getByText("Mira Member").waitFor();
      const saved = await harness.api("GET", `/api/v1/devices/${elm?.id}`, { token: adminToken });
      expect(saved.body).toMatchObject({ device_name: "Elm workstation", user_id: member.body.id });

      // Stolen: a wipe is asked for, and the device never checks in again.
      const wipe = await harness.api("POST", `/api/v1/devices/${elm?.id}/wipe`, {
        token: adminToken,
        body: { reason: "Stolen" },
      });
      expect(wipe.status).toBe(202);
      await page.reload();
      await page.getByRole("heading", { level: 1, name: "Elm workstation" }).waitFor();
      expect(await page.getByRole("button", { name: "Delete…" }).count()).toBe(0);
      await page.getByRole("button", { name: "Retire…" }).click();
      const retire = page.getByRole("dialog", { name: "Retire Elm workstation?" });
      await retire.getByText("its pending wipe is cancelled").waitFor();
      await retire.getByLabel("Reason").fill("Stolen from a car, never came back");
      const confirm = retire.getByRole("button", { name: "Retire device" });
      expect(await confirm.isDisabled()).toBe(true);
      await retire.getByLabel("Type Elm workstation to confirm").fill("Elm workstation");
      await confirm.click();
      await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
      expect(await page.getByRole("link", { name: "Elm workstation" }).count()).toBe(0);
      const gone = await harness.api("GET", `/api/v1/devices/${elm?.id}`, { token: adminToken });
      expect(gone.status).toBe(404);
      const agent = await harness.api("POST", "/api/v1/agent/checkin", { token: elm?.token, body: {} });
      expect(agent.status).toBe(401);
    });
  }, 60_000);
});
