/**
 * The console's session across page loads, in Chromium against the built executable, with every request
 * the page makes recorded: a browser that never signed in goes to the sign-in form without asking for a
 * refresh (none would succeed); a signed-in one keeps its session through a reload with one refresh that
 * succeeds; after signing out, a reload asks nothing again. The readable bulwark_signed_in marker the
 * server sets beside the httpOnly refresh cookie is what tells the page which case it is in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page, Request } from "playwright-core";
import {
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

interface Recorded {
  method: string;
  path: string;
  status: number | "failed";
}

/** Every request of the page from now on, with its answer's status ("failed": no answer at all). */
function recordRequests(page: Page): Recorded[] {
  const recorded: Recorded[] = [];
  const answered = new WeakSet<Request>();
  page.on("response", (response) => {
    answered.add(response.request());
    const url = new URL(response.url());
    if (url.protocol === "data:") return;
    recorded.push({ method: response.request().method(), path: url.pathname, status: response.status() });
  });
  page.on("requestfailed", (request) => {
    const url = new URL(request.url());
    // An answer whose body nobody read is reported failed too when the page goes: it was answered.
    if (url.protocol === "data:" || answered.has(request)) return;
    recorded.push({ method: request.method(), path: url.pathname, status: "failed" });
  });
  return recorded;
}

const isFailure = (request: Recorded) => request.status === "failed" || request.status >= 400;
const refreshes = (recorded: Recorded[]) =>
  recorded.filter((request) => request.method === "POST" && request.path === "/api/v1/auth/refresh");

/** The sign-in form, shown and ready. */
async function signInFormShows(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
  await page.getByLabel("Email").waitFor();
}

describe("a page load without a session", () => {
  test("a fresh browser gets the sign-in form with no refresh and no failing request", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "fresh load without a session", async () => {
      const recorded = recordRequests(page);
      await page.goto(`${harness.origin}/console/`);
      await signInFormShows(page);
      expect(new URL(page.url()).pathname).toBe("/console/sign-in");
      expect(refreshes(recorded)).toEqual([]);
      expect(recorded.filter(isFailure)).toEqual([]);
      // The page itself was loaded (not a cached copy): the recording saw it.
      expect(recorded.map((request) => request.path)).toContain("/console/");

      // A deep link too: straight to sign-in, remembering where it was going.
      recorded.length = 0;
      await page.goto(`${harness.origin}/console/devices?status=online`);
      await signInFormShows(page);
      expect(new URL(page.url()).searchParams.get("next")).toBe("/devices?status=online");
      expect(refreshes(recorded)).toEqual([]);
      expect(recorded.filter(isFailure)).toEqual([]);
    });
    await page.context().close();
  }, 60_000);

  test("a marker left without its refresh cookie costs one refused refresh, then is forgotten", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "stale signed-in marker", async () => {
      // As after the refresh cookie was lost while the marker stayed (a browser clearing cookies of one path).
      await page.context().addCookies([
        {
          name: "bulwark_signed_in",
          value: "1",
          domain: "localhost",
          path: "/console",
          sameSite: "Strict",
        },
      ]);
      const recorded = recordRequests(page);
      await page.goto(`${harness.origin}/console/`);
      await signInFormShows(page);
      expect(refreshes(recorded).map((request) => request.status)).toEqual([400]);
      expect(await markerOf(page)).toBeUndefined();

      recorded.length = 0;
      await page.reload();
      await signInFormShows(page);
      expect(refreshes(recorded)).toEqual([]);
      expect(recorded.filter(isFailure)).toEqual([]);
    });
    await page.context().close();
  }, 60_000);
});

/** The page's bulwark_signed_in cookie, as the browser holds it for the console's pages. */
async function markerOf(page: Page) {
  const cookies = await page.context().cookies(`${harness.origin}/console/`);
  return cookies.find((cookie) => cookie.name === "bulwark_signed_in");
}

describe("a signed-in page", () => {
  test("signs in, keeps the session through a reload with one refresh, and after signing out asks nothing", async () => {
    const page = await harness.newPage();
    await withScreenshotOnFailure(page, "session through reloads", async () => {
      const recorded = recordRequests(page);
      await signInThroughForm(page, harness.origin);
      await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
      expect(refreshes(recorded)).toEqual([]);
      expect(recorded.filter(isFailure)).toEqual([]);
      // The marker is readable by the page; the refresh token is not.
      expect(await markerOf(page)).toMatchObject({ value: "1", httpOnly: false, path: "/console" });
      const refreshCookie = (await page.context().cookies(`${harness.origin}/api/v1/auth/refresh`)).find(
        (cookie) => cookie.name === "bulwark_refresh",
      );
      expect(refreshCookie?.httpOnly).toBe(true);
      expect(await page.evaluate(() => document.cookie)).toBe("bulwark_signed_in=1");

      // A reload resumes the session: one refresh, answered 200, and the dashboard without the form.
      recorded.length = 0;
      await page.reload();
      await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(refreshes(recorded).map((request) => request.status)).toEqual([200]);
      expect(recorded.filter(isFailure)).toEqual([]);

      // Signed out: both cookies go, and the next load asks for no refresh.
      await page.getByRole("button", { name: "Sign out" }).click();
      await signInFormShows(page);
      expect(await markerOf(page)).toBeUndefined();
      recorded.length = 0;
      await page.reload();
      await signInFormShows(page);
      expect(refreshes(recorded)).toEqual([]);
      expect(recorded.filter(isFailure)).toEqual([]);
    });
    await page.context().close();
  }, 60_000);
});
