/**
 * Phones without an agent in the console (issue 42), in Chromium against the built executable: an
 * iPhone added from the devices page, its one-time link's QR code read back by zbarimg and opened as the
 * phone would; an Android phone's tunnel QR code read back the same way; the device page of each (VPN
 * profile only, the key's state, no wipe), a new key the phone's WireGuard app made, and the profile's
 * download.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import {
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";
import { wgPubkey } from "../helpers/wireguard";

let harness: ConsoleHarness;
let folder: string;

beforeAll(async () => {
  harness = await startConsoleHarness();
  folder = mkdtempSync(join(tmpdir(), "bulwark-console-phones-"));
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** The QR code on the page, as Chromium drew it, read back by zbarimg. */
async function scanQr(image: Locator, name: string): Promise<string> {
  const png = join(folder, `${name}.png`);
  await image.screenshot({ path: png });
  const scan = Bun.spawnSync(["zbarimg", "--raw", "-q", png], { stdout: "pipe", stderr: "pipe" });
  if (scan.exitCode !== 0) throw new Error(`zbarimg read nothing in ${png}: ${scan.stderr.toString()}`);
  return scan.stdout.toString().replace(/\n$/, "");
}

/** The one-time link opened as the phone's browser would: no session, no token. */
async function openLink(url: string): Promise<Response> {
  const { pathname, search } = new URL(url);
  return await fetch(new URL(`${pathname}${search}`, harness.origin));
}

async function openAddPhone(page: Page) {
  await page.goto(`${harness.origin}/console/devices`);
  await page.getByRole("heading", { level: 1, name: "Devices" }).waitFor();
  await page.getByRole("link", { name: "Add a phone" }).first().click();
  await page.getByRole("heading", { level: 1, name: "Add a phone" }).waitFor();
}

/** The wipe action of a phone without an agent: there, disabled, and saying why. */
async function expectNoWipe(page: Page) {
  const wipe = page.getByRole("button", { name: "Wipe…" });
  expect(await wipe.isDisabled()).toBe(true);
  await page
    .getByText("No wipe without an agent: suspend the phone to cut its tunnel, then retire it.")
    .waitFor();
}

describe("console phones", () => {
  test("an iPhone: its link's QR code reads back and serves the signed profile; its page says VPN profile only", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "phones ios", async () => {
      await signInThroughForm(page, harness.origin);
      await openAddPhone(page);
      // Before adding: what an iPhone will enforce, and the rest collapsed with why.
      const support = page.getByRole("region", { name: "What an iPhone will enforce" });
      expect(await support.innerText()).toContain("allowScreenShot false");
      await support.getByText(/^Not enforced on an iPhone: \d+ settings, and why$/).click();
      await support.getByText(/printing needs Apple's MDM channel/).waitFor();
      await page.getByText("The phone's own key is the safer way").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByLabel("Name").fill("Ana's iPhone");
      await page.getByRole("button", { name: "Add phone" }).click();
      await page.getByRole("heading", { name: "Ana's iPhone added" }).waitFor();
      const link = await page.getByLabel("One-time link").inputValue();
      expect(link).toMatch(/\/api\/v1\/phone-profiles\/bwp_[A-Za-z0-9_-]{43}$/);
      await page.getByText(/^It works once, until /).waitFor();
      const qr = page.getByRole("img", {
        name: "QR code of the one-time link to the profile of Ana's iPhone",
      });
      expect(await scanQr(qr, "ios-link")).toBe(link);
      expect(await accessibilityViolations(page)).toEqual([]);

      // The phone's camera opens it: a page (opening it uses nothing up), whose button fetches the
      // signed profile, once.
      const landing = await openLink(link);
      expect(landing.status).toBe(200);
      expect(landing.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await landing.text()).toContain('href="?install=1"');
      const profile = await openLink(`${link}?install=1`);
      expect(profile.status).toBe(200);
      expect(profile.headers.get("content-type")).toBe("application/x-apple-aspen-config");
      expect((await openLink(`${link}?install=1`)).status).toBe(404);

      await page.getByRole("link", { name: "Open the device" }).click();
      await page.getByRole("heading", { level: 1, name: "Ana's iPhone" }).waitFor();
      await page.getByText("VPN profile only").first().waitFor();
      const card = page.getByRole("region", { name: "VPN profile" });
      await card.getByText("Erased: make a new key to give the phone its tunnel again").waitFor();
      await card.getByText("com.apple.vpn.managed").waitFor();
      expect(await card.getByRole("button", { name: "New profile link" }).count()).toBe(0);
      await page
        .getByRole("region", { name: "Compliance" })
        .getByText("nothing on this phone reports back")
        .waitFor();
      await expectNoWipe(page);
      expect(await accessibilityViolations(page)).toEqual([]);

      // A new key the phone's WireGuard app made: its private key never reaches the server.
      const publicKey = wgPubkey(Bun.spawnSync(["wg", "genkey"]).stdout.toString().trim());
      await card.getByRole("button", { name: "New key…" }).click();
      const dialog = page.getByRole("dialog", { name: "New key for Ana's iPhone" });
      await dialog.getByLabel("The phone's WireGuard app made it").check();
      await dialog.getByLabel("Public key from the WireGuard app").fill(publicKey);
      await dialog.getByRole("button", { name: "Make the new key" }).click();
      await card.getByText("Never held: the private key is the phone's own").waitFor();
      await page.getByRole("region", { name: "Details" }).getByText(publicKey).waitFor();
      const newLink = await card.getByLabel("One-time link").inputValue();
      expect(newLink).not.toBe(link);
      expect(await scanQr(card.getByRole("img", { name: /^QR code of the one-time link/ }), "ios-new")).toBe(
        newLink,
      );

      // The administrator's download: the signed profile, saved under the phone's name.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        card.getByRole("button", { name: "Download profile" }).click(),
      ]);
      expect(download.suggestedFilename()).toBe("Ana-s-iPhone.mobileconfig");
      const saved = join(folder, "downloaded.mobileconfig");
      await download.saveAs(saved);
      // CMS SignedData in DER: a SEQUENCE, then the signedData object identifier.
      const bytes = readFileSync(saved);
      expect(bytes[0]).toBe(0x30);
      expect(bytes.includes(Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]))).toBe(true);
    });
  }, 60_000);

  test("an Android phone: its tunnel's QR code reads back as a wg-quick file with its private key; no wipe", async () => {
    const page = await harness.newPage({ width: 390, height: 844, colorScheme: "dark" });
    await withScreenshotOnFailure(page, "phones android", async () => {
      await signInThroughForm(page, harness.origin);
      await openAddPhone(page);
      await page.getByLabel("Name").fill("Pixel 8");
      await page.getByLabel("Android").check();
      await page.getByRole("region", { name: "What an Android phone will enforce" }).waitFor();
      await page.getByRole("button", { name: "Add phone" }).click();
      await page.getByRole("heading", { name: "Pixel 8 added" }).waitFor();
      await page.getByText("WireGuard app → + → Scan from QR code").waitFor();
      const tunnel = await scanQr(
        page.getByRole("img", { name: "QR code of the WireGuard tunnel of Pixel 8" }),
        "android-added",
      );
      expect(tunnel).toContain("[Interface]");
      expect(tunnel).toMatch(/^PrivateKey = [A-Za-z0-9+/]{43}=$/m);
      expect(tunnel).toContain("[Peer]");
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByRole("link", { name: "Open the device" }).click();
      await page.getByRole("heading", { level: 1, name: "Pixel 8" }).waitFor();
      await page.getByText("VPN profile only").first().waitFor();
      const card = page.getByRole("region", { name: "VPN profile" });
      await card.getByRole("button", { name: "Show QR code" }).click();
      expect(
        await scanQr(card.getByRole("img", { name: /^QR code of the WireGuard tunnel/ }), "android-page"),
      ).toBe(tunnel);
      expect(await card.getByRole("button", { name: "Download profile" }).count()).toBe(0);
      await expectNoWipe(page);
      expect(await accessibilityViolations(page)).toEqual([]);
    });
  }, 60_000);
});
