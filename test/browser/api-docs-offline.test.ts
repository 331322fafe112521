/**
 * The API documentation works air-gapped, as the executable serves it: Debian's Chromium (driven by
 * playwright-core) loads /api/v1/docs from the built executable, waits for the operations to render,
 * opens the test-request client and sends one request, and every request the page made went to the
 * server itself. Scalar's extras that need scalar.com ("Ask AI", "Share", "Deploy", "Open API Client")
 * are not on the page, and the client names the request URL without a double slash. The page is loaded
 * from 127.0.0.1, where Scalar shows the most: it takes loopback for a developer's machine.
 * scripts/test-tools.ts installs chromium when it is missing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { executablePath, type RunningServer, startServer } from "../helpers/binary";

const CHROMIUM = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? "/usr/bin/chromium";
/** Texts of Scalar's controls that only work with scalar.com (or, for the toolbar, that lead to them). */
const ONLINE_ONLY = ["Ask AI", "Share", "Deploy", "Developer Tools", "Configure", "Open API Client"];

let folder: string;
let server: RunningServer;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "bulwark-api-docs-"));
  server = await startServer(await executablePath(), folder);
  origin = new URL(server.url).origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

test("the docs page asks nothing of another origin, offers no online-only button and names URLs with one slash", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const requested: string[] = [];
  context.on("request", (request) => requested.push(request.url()));
  context.on("serviceworker", (worker) => requested.push(worker.url()));
  page.on("websocket", (socket) => requested.push(socket.url()));
  // What would leave the machine is recorded above, then refused: the test never reaches the internet.
  await context.route(
    (url) => url.origin !== origin,
    (route) => route.abort("blockedbyclient"),
  );
  try {
    await page.goto(`${origin}/api/v1/docs`);
    await page.getByRole("button", { name: /This OpenAPI 3\.1 document/ }).waitFor();
    await page.waitForLoadState("networkidle");

    await page.getByRole("button", { name: "Test Request (get /api/v1/openapi.json)" }).click();
    const send = page.getByRole("dialog").getByRole("button", { name: /request to / });
    await send.waitFor();
    const label = (await send.textContent()) ?? "";
    const testRequest = page.waitForRequest((request) => request.url() === `${origin}/api/v1/openapi.json`);
    await send.click();
    await testRequest;
    await page.waitForLoadState("networkidle");

    // innerText is what a person sees: it leaves out what is hidden.
    const visibleLines = (await page.locator("body").innerText()).split("\n").map((line) => line.trim());
    // One comparison, so that a failure shows every way the page fell short at once.
    expect({
      testRequestUrl: /request to (\S+)/.exec(label)?.[1],
      hasDoubleSlash: (await page.locator("body").textContent())?.includes(`${origin}//`),
      onlineOnlyControls: ONLINE_ONLY.filter((text) => visibleLines.includes(text)),
      offMachineRequests: requested.filter((url) => new URL(url).origin !== origin),
    }).toEqual({
      testRequestUrl: `${origin}/api/v1/openapi.json`,
      hasDoubleSlash: false,
      onlineOnlyControls: [],
      offMachineRequests: [],
    });
    expect(requested).toContain(`${origin}/api/v1/docs/assets/scalar.js`);
  } catch (error) {
    const screenshot = join(tmpdir(), `bulwark-api-docs-offline-${Date.now()}.png`);
    await page.screenshot({ path: screenshot, fullPage: true }).catch(() => {});
    console.error(`The page when the test failed: ${screenshot}`);
    throw error;
  } finally {
    await context.close();
  }
}, 60_000);
