/**
 * The console in a real browser: Debian's Chromium (installed by scripts/test-tools.ts), driven by
 * playwright-core, against the built executable. Each test gets a fresh page; a failing step leaves a
 * screenshot in test-results/console/ (CI keeps the folder).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { executablePath, type RunningServer, runCommand, startServer } from "./binary";
import { jsonRequest } from "./json-request";

export const ADMIN = { email: "admin@example.com", password: "correct-horse-battery", name: "Ada Admin" };
const CHROMIUM = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? "/usr/bin/chromium";
const SCREENSHOTS = join(import.meta.dir, "..", "..", "test-results", "console");
const AXE_SOURCE = readFileSync(
  join(import.meta.dir, "..", "..", "node_modules", "axe-core", "axe.min.js"),
  "utf8",
);

export interface ConsoleHarness {
  server: RunningServer;
  /** http://localhost:PORT: a secure context for WebAuthn and the clipboard. */
  origin: string;
  browser: Browser;
  /** A JSON request to the server, as a script would send it. */
  api(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown },
  ): ReturnType<typeof jsonRequest>;
  /** Runs a command of the executable on the server's data folder, as the operator does. */
  operator(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** The admin's access token, for setting up through the API. */
  adminToken(): Promise<string>;
  /** A new page at phone or desktop size, in light or dark. */
  newPage(options?: { width?: number; height?: number; colorScheme?: "light" | "dark" }): Promise<Page>;
  stop(): Promise<void>;
}

/**
 * Starts the executable under test (or `options.binary`: a copy, for a test that decides what sits
 * beside it) on a folder of its own, and a browser.
 */
export async function startConsoleHarness(
  env: Record<string, string> = {},
  options: { binary?: string } = {},
): Promise<ConsoleHarness> {
  const binary = options.binary ?? (await executablePath());
  const folder = mkdtempSync(join(tmpdir(), "bulwark-console-"));
  const server = await startServer(binary, folder, {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    ...env,
  });
  const origin = `http://localhost:${new URL(server.url).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  const api: ConsoleHarness["api"] = (method, path, options) => jsonRequest(origin, method, path, options);
  let token: string | null = null;
  return {
    server,
    origin,
    browser,
    api,
    async operator(args) {
      return runCommand(binary, args, folder);
    },
    async adminToken() {
      if (token) return token;
      const answer = await api("POST", "/api/v1/auth/login", {
        body: { email: ADMIN.email, password: ADMIN.password },
      });
      if (answer.status !== 200 || !answer.body.token)
        throw new Error(`admin sign-in failed: ${JSON.stringify(answer.body)}`);
      token = answer.body.token as string;
      return token;
    },
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
        colorScheme: options.colorScheme ?? "light",
      });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      return page;
    },
    async stop() {
      await browser.close();
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Runs the steps of a browser test; when one throws, saves a full-page screenshot named after the test
 * (and the page's URL in the error) before failing.
 */
export async function withScreenshotOnFailure(
  page: Page,
  name: string,
  steps: () => Promise<void>,
): Promise<void> {
  try {
    await steps();
  } catch (error) {
    const file = await saveScreenshot(page, name);
    throw new Error(`${(error as Error).message}\n(page ${page.url()}; screenshot ${file})`, {
      cause: error,
    });
  }
}

/** Saves a full-page screenshot of the page in test-results/console/, named after `name`; its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => {});
  return file;
}

/** Signs in through the sign-in form; the second factor too when `totp` gives codes. */
export async function signInThroughForm(
  page: Page,
  origin: string,
  credentials: { email: string; password: string } = ADMIN,
  totp?: () => string,
): Promise<void> {
  await page.goto(`${origin}/console/`);
  await page.getByLabel("Email").fill(credentials.email);
  await page.getByLabel("Password").fill(credentials.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  if (totp) {
    await page.getByLabel("Authentication code").fill(totp());
    await page.getByRole("button", { name: "Verify" }).click();
  }
  // The sign-out button is in the top bar at every width (the navigation folds into a menu on phones).
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core (WCAG 2.0–2.2 A and AA rules) run in the page as it is now; the serious and critical
 * violations, described well enough to fix. The script is evaluated through the DevTools protocol,
 * which the page's Content-Security-Policy does not govern, so the console keeps its real CSP.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
      },
    });
    return result.violations;
  })) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(" "))
          .join(", ")}`,
    );
}
