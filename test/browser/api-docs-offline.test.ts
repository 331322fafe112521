/**
 * The API documentation works air-gapped, as the executable serves it: Debian's Chromium (driven by
 * playwright-core) loads /api/v1/docs from the built executable, waits for the operations to render,
 * opens the test-request client and sends one request, and every request the page made went to the
 * server itself. Scalar's extras that need scalar.com ("Ask AI", "Share", "Deploy", "Open API Client")
 * are not on the page, and the client names the request URL without a double slash. The page is loaded
 * from 127.0.0.1, where Scalar shows the most: it takes loopback for a developer's machine.
 * The page keeps to its Content-Security-Policy: Chromium reports no violation while it renders and sends a
 * test request, refuses to run a script injected into it and to show it in another site's frame.
 * scripts/test-tools.ts installs chromium when it is missing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
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
  const violations = await recordCspViolations(page);
  try {
    const answer = await page.goto(`${origin}/api/v1/docs`);
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
      cspViolations: [...violations],
    }).toEqual({
      testRequestUrl: `${origin}/api/v1/openapi.json`,
      hasDoubleSlash: false,
      onlineOnlyControls: [],
      offMachineRequests: [],
      cspViolations: [],
    });
    expect(requested).toContain(`${origin}/api/v1/docs/assets/scalar.js`);

    // The policy that kept it so, and the console's other page headers.
    const headers = answer?.headers() ?? {};
    const policy = directives(headers["content-security-policy"] ?? "");
    const consolePage = await fetch(`${origin}/console/`);
    expect({
      defaultSrc: policy.get("default-src"),
      scriptSrc: policy.get("script-src")?.filter((source) => !/^'sha256-[A-Za-z0-9+/]{43}='$/.test(source)),
      scriptHashes: policy.get("script-src")?.filter((source) => source.startsWith("'sha256-")).length,
      connectSrc: policy.get("connect-src"),
      frameAncestors: policy.get("frame-ancestors"),
      baseUri: policy.get("base-uri"),
      formAction: policy.get("form-action"),
      otherHeaders: PAGE_HEADERS.map((name) => `${name}: ${headers[name]}`),
    }).toEqual({
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptHashes: 1,
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      otherHeaders: PAGE_HEADERS.map((name) => `${name}: ${consolePage.headers.get(name)}`),
    });

    // A script injected into the page, as an XSS would, does not run: Chromium refuses it and says so.
    const injected = await page.evaluate(
      () =>
        new Promise<{ ran: boolean; refusedBy?: string }>((resolve) => {
          const state = globalThis as { injectedScriptRan?: boolean };
          document.addEventListener("securitypolicyviolation", (event) =>
            resolve({ ran: state.injectedScriptRan === true, refusedBy: event.violatedDirective }),
          );
          const script = document.createElement("script");
          script.textContent = "globalThis.injectedScriptRan = true";
          document.body.append(script);
          // An inline script that is allowed runs as it is inserted.
          if (state.injectedScriptRan) resolve({ ran: true });
        }),
    );
    expect(injected).toEqual({ ran: false, refusedBy: "script-src-elem" });
  } catch (error) {
    const screenshot = join(tmpdir(), `bulwark-api-docs-offline-${Date.now()}.png`);
    await page.screenshot({ path: screenshot, fullPage: true }).catch(() => {});
    console.error(`The page when the test failed: ${screenshot}`);
    throw error;
  } finally {
    await context.close();
  }
}, 60_000);

test("another site cannot show the docs page in a frame", async () => {
  // Another site, on this machine too: Chromium keeps a site on the internet from framing a local address
  // whatever that address answers, which would prove nothing about the page's headers.
  const framing = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Response(
        `<!doctype html><title>Another site</title><iframe src="${origin}/api/v1/docs"></iframe>`,
        {
          headers: { "content-type": "text/html" },
        },
      ),
  });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    // The page's load event waits for its frame, shown or refused.
    await page.goto(framing.url.href);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    expect({
      framed: frame?.url(),
      docsInFrame: await frame?.locator("#api-reference").count(),
    }).toEqual({
      framed: expect.not.stringContaining("/api/v1/docs"),
      docsInFrame: 0,
    });
  } finally {
    await context.close();
    await framing.stop(true);
  }
}, 60_000);

/** The headers the console's page gets besides its CSP, which the docs page must get too. */
const PAGE_HEADERS = [
  "x-frame-options",
  "x-content-type-options",
  "referrer-policy",
  "cross-origin-opener-policy",
];

/** A Content-Security-Policy's directives, each with its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name ?? "", sources]),
  );
}

/**
 * Every CSP violation Chromium reports on the page from its first script on: the page's
 * securitypolicyviolation events (listened to through DevTools, which the CSP does not govern) and the
 * console errors Chromium writes for them.
 */
async function recordCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction("reportCspViolation", (violation: string) => violations.push(violation));
  await page.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (event) =>
      (globalThis as unknown as { reportCspViolation: (violation: string) => void }).reportCspViolation(
        `${event.violatedDirective} refused ${event.blockedURI} (${event.sourceFile}:${event.lineNumber})`,
      ),
    ),
  );
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}
