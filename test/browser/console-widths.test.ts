/**
 * Every page of the console at a phone's width (390 px, and 320 px), filled with real data: a device
 * that breaks five rules, with a certificate and a pending wipe; policies with a history; a webhook with
 * deliveries; users, API keys, an audit trail, single sign-on settings. On each page: the page does not
 * scroll sideways and nothing sticks out of the window; a table either fits or scrolls inside its own
 * box, and no cell's text is broken inside a word; badges are whole. The list of pages is checked
 * against the routes of src/console/app.tsx, so a new page cannot be left out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import {
  type ConsoleHarness,
  saveScreenshot,
  signInThroughForm,
  startConsoleHarness,
} from "../helpers/console-browser";
import { makeCsr } from "../helpers/pki";

const WIDTHS = [390, 320];
const NOT_FOUND = "(no route: the not-found page)";

let harness: ConsoleHarness;
let receiver: ReturnType<typeof Bun.serve>;
const ids = { device: "", phone: "", policy: "", webhook: "" };

interface ConsolePage {
  /** The route of app.tsx this visit shows (NOT_FOUND for a path no route matches). */
  route: string;
  /** The path below /console/. */
  path: string;
  /** Signed out (the sign-in pages). */
  isPublic?: boolean;
  /** What shows that the page has its data (waited for before measuring). */
  shows: (page: Page) => Locator;
  /** A state to bring the page into after it shows (a selection, say). */
  prepare?: (page: Page) => Promise<void>;
}

const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name });
const table = (page: Page, name: RegExp) => page.getByRole("table", { name }).getByRole("row").nth(1);

function consolePages(): ConsolePage[] {
  return [
    { route: "/sign-in", path: "/sign-in", isPublic: true, shows: (page) => heading(page, "Sign in") },
    {
      route: "/sso/callback",
      path: "/sso/callback?state=unknown&code=unknown",
      isPublic: true,
      shows: (page) => page.getByText("This sign-in was not started here"),
    },
    { route: "/", path: "/", shows: (page) => table(page, /^The ten latest audit log entries/) },
    { route: "/devices", path: "/devices", shows: (page) => table(page, /^Devices, page/) },
    {
      route: "/devices",
      path: "/devices",
      shows: (page) => table(page, /^Devices, page/),
      // The bulk actions bar appears with a selection; its policy dialog has a select of every policy.
      prepare: async (page) => {
        await page.getByRole("checkbox", { name: "Select Borealis phone of the finance department" }).check();
        await page
          .getByRole("region", { name: "Bulk actions" })
          .getByRole("button", { name: "Assign policy…" })
          .click();
        const dialog = page.getByRole("dialog", { name: "Assign a policy to 1 device" });
        await dialog.getByLabel("Policy").locator("option").nth(2).waitFor({ state: "attached" });
      },
    },
    {
      route: "/devices/:id",
      path: `/devices/${ids.device}`,
      shows: (page) => table(page, /rules the device does not meet/),
      prepare: async (page) => {
        await page.getByRole("region", { name: "Wipe in progress" }).waitFor();
        await page.getByLabel("Change policy").locator("option").nth(2).waitFor({ state: "attached" });
        await page.getByRole("list", { name: /^Activity/ }).waitFor();
      },
    },
    {
      route: "/devices/add-phone",
      path: "/devices/add-phone",
      shows: (page) => heading(page, "Add a phone"),
      // What an iPhone will not enforce, each setting with why.
      prepare: async (page) => {
        await page.getByText(/^Not enforced on an iPhone/).click();
        await page.getByText(/printing needs Apple's MDM channel/).waitFor();
      },
    },
    {
      route: "/devices/:id",
      path: `/devices/${ids.phone}`,
      shows: (page) => page.getByRole("region", { name: "VPN profile" }),
      // A new one-time link: its QR code beside the link and its expiry.
      prepare: async (page) => {
        await page.getByRole("button", { name: "New profile link" }).click();
        await page.getByLabel("One-time link").waitFor();
      },
    },
    {
      route: "/enrollment-tokens",
      path: "/enrollment-tokens",
      shows: (page) => table(page, /^Enrollment tokens/),
    },
    { route: "/policies", path: "/policies", shows: (page) => table(page, /^Policies/) },
    { route: "/policies/new", path: "/policies/new", shows: (page) => heading(page, "New policy") },
    {
      route: "/policies/:id",
      path: `/policies/${ids.policy}`,
      shows: (page) => page.getByRole("list", { name: "Changes in version 2" }),
      // A version's whole document, in a dialog.
      prepare: async (page) => {
        await page.getByRole("button", { name: "View version 1" }).click();
        await page.getByRole("dialog", { name: "Version 1" }).getByText("Saved by").waitFor();
      },
    },
    {
      route: "/policies/:id",
      path: `/policies/${ids.policy}?tab=devices`,
      shows: (page) => page.getByRole("tabpanel").getByRole("link", { name: /^Borealis phone/ }),
    },
    {
      route: "/policies/:id/edit",
      path: `/policies/${ids.policy}/edit`,
      shows: (page) => heading(page, /^Edit Strict laptops/),
    },
    { route: "/webhooks", path: "/webhooks", shows: (page) => table(page, /^Webhooks/) },
    { route: "/webhooks/:id", path: `/webhooks/${ids.webhook}`, shows: (page) => table(page, /^Deliveries/) },
    { route: "/users", path: "/users", shows: (page) => table(page, /^Users,/) },
    { route: "/api-keys", path: "/api-keys", shows: (page) => table(page, /^API keys/) },
    { route: "/audit", path: "/audit", shows: (page) => table(page, /^Audit log/) },
    {
      route: "/settings",
      path: "/settings",
      shows: (page) => page.getByRole("textbox", { name: /Issuer/ }),
    },
    { route: "/account", path: "/account", shows: (page) => heading(page, "Your account") },
    { route: NOT_FOUND, path: "/no/such/page", shows: (page) => heading(page, "Page not found") },
  ];
}

/** The routes src/console/app.tsx renders: its ROUTES table and the public pages it tests the path for. */
function routesOfApp(): string[] {
  const source = readFileSync(join(import.meta.dir, "..", "..", "src", "console", "app.tsx"), "utf8");
  const routes = [...source.matchAll(/\["(\/[^"]*)",\s*[A-Z]\w*\]/g)].map((found) => found[1] ?? "");
  const publicPaths = [...source.matchAll(/path === "(\/[^"]*)"/g)].map((found) => found[1] ?? "");
  return [...new Set([...routes, ...publicPaths, NOT_FOUND])].sort();
}

/**
 * What is wrong with the layout of the page as it is now, in words: the page wider than the window,
 * elements past its edges (outside a box that scrolls sideways), tables clipped, cells whose text
 * breaks inside a word, badges cut or broken.
 */
function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const name = (element: Element) => {
      const classes = [...element.classList].map((item) => `.${item}`).join("");
      const text = (element.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 40);
      return `<${element.tagName.toLowerCase()}${classes}> "${text}"`;
    };
    const overflowX = (element: Element) => getComputedStyle(element).overflowX;
    const scrollsSideways = (element: Element) => ["auto", "scroll"].includes(overflowX(element));
    /** The nearest ancestor that does not let its content show past its sides (html and body aside). */
    const clippingAncestor = (element: Element) => {
      for (
        let parent = element.parentElement;
        parent && parent !== document.body;
        parent = parent.parentElement
      )
        if (overflowX(parent) !== "visible") return parent;
      return null;
    };
    /** Visually hidden (clipped to nothing, as .visually-hidden is), for screen readers only. */
    const isHidden = (element: Element) => {
      for (let node: Element | null = element; node; node = node.parentElement)
        if (getComputedStyle(node).clipPath !== "none") return true;
      return false;
    };

    const pageWidth = document.documentElement.scrollWidth;
    if (pageWidth > width)
      problems.push(`the page scrolls sideways: ${pageWidth} px wide in a ${width} px window`);

    const outside: Element[] = [];
    for (const element of document.body.querySelectorAll("*")) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || isHidden(element)) continue;
      if (box.right <= width + 0.5 && box.left >= -0.5) continue;
      const clipper = clippingAncestor(element);
      if (clipper && scrollsSideways(clipper)) continue;
      if (outside.some((reported) => reported.contains(element))) continue;
      outside.push(element);
      problems.push(`${name(element)} reaches ${Math.round(box.left)}..${Math.round(box.right)} px`);
    }

    for (const element of document.querySelectorAll("table")) {
      const clipper = clippingAncestor(element);
      if (clipper && !scrollsSideways(clipper) && element.scrollWidth > clipper.clientWidth)
        problems.push(`${name(element)} is cut by ${name(clipper)}, which does not scroll`);
    }

    // A word on two lines: its text range has boxes on two lines. Words are what lies between spaces,
    // and a line may also break after a hyphen or a slash.
    const brokenWords = (element: Element) => {
      const broken: string[] = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? "";
        const parent = node.parentElement;
        if (!parent || isHidden(parent)) continue;
        for (const found of text.matchAll(/[^\s/-]+[/-]?/g)) {
          const range = document.createRange();
          range.setStart(node, found.index);
          range.setEnd(node, found.index + found[0].length);
          const lines = new Set(
            [...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)),
          );
          if (lines.size > 1) broken.push(found[0]);
        }
      }
      return broken;
    };
    for (const cell of document.querySelectorAll("td, th")) {
      const broken = brokenWords(cell);
      if (broken.length > 0)
        problems.push(`${name(cell)} breaks inside ${broken.map((word) => `"${word}"`).join(", ")}`);
    }

    for (const badge of document.querySelectorAll(".badge")) {
      if (isHidden(badge)) continue;
      if (badge.scrollWidth > badge.clientWidth)
        problems.push(`${name(badge)} is cut: ${badge.scrollWidth} px in ${badge.clientWidth}`);
      if (brokenWords(badge).length > 0 || badge.getClientRects().length > 1)
        problems.push(`${name(badge)} is broken over lines`);
      const clipper = clippingAncestor(badge);
      if (clipper && !scrollsSideways(clipper)) {
        const inner = clipper.getBoundingClientRect();
        const box = badge.getBoundingClientRect();
        if (box.right > inner.right + 0.5 || box.left < inner.left - 0.5)
          problems.push(`${name(badge)} is cut by ${name(clipper)}`);
      }
    }
    return problems;
  });
}

/** Goes to a console path the way a link does: the router, without reloading the page. */
async function goInsideConsole(page: Page, path: string): Promise<void> {
  await page.evaluate((url) => {
    history.pushState(null, "", url);
    dispatchEvent(new PopStateEvent("popstate"));
  }, `/console${path}`);
}

/** Waits until the page shows its data and nothing is loading any more. */
async function settle(page: Page, visit: ConsolePage): Promise<void> {
  await visit.shows(page).waitFor();
  await visit.prepare?.(page);
  await page.waitForFunction(
    () => document.querySelectorAll('[aria-busy="true"], .loading, .spinner').length === 0,
  );
}

async function api(method: string, path: string, body?: unknown) {
  const answer = await harness.api(method, path, { token: await harness.adminToken(), body });
  if (answer.status >= 300)
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Polls until the check holds (the dispatcher sends deliveries in the background). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await check()) return;
    await Bun.sleep(100);
  }
  throw new Error(`still not true after 10 s: ${what}`);
}

beforeAll(async () => {
  receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
  harness = await startConsoleHarness({ BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });

  // A webhook for every event first, so that what follows leaves deliveries.
  const webhook = await api("POST", "/api/v1/webhooks", {
    url: `http://127.0.0.1:${receiver.port}/hooks/bulwark-events`,
    events: ["*"],
    secret: "a-secret-of-some-length",
  });
  ids.webhook = webhook.id;

  // A policy from the strict template, changed once: its history has two versions.
  const policy = await api("POST", "/api/v1/policies/from-template", {
    template_id: "strict",
    name: "Strict laptops of the finance department",
    description: "Everything locked down: the laptops that hold customer data.",
  });
  ids.policy = policy.id;
  await api("PUT", `/api/v1/policies/${policy.id}`, {
    policy_data: { storage: { max_file_size_mb: 25 }, network: { split_tunnel: true } },
  });

  // Devices; one under the strict policy that breaks all five rules, with a certificate and a pending wipe.
  const enrollment = await api("POST", "/api/v1/enrollment-tokens", { max_uses: 50, policy_id: policy.id });
  const enroll = async (name: string, platform: string, osVersion: string, extra: object = {}) => {
    const answer = await harness.api("POST", "/api/v1/devices/enroll", {
      body: {
        enrollment_token: enrollment.token,
        device_name: name,
        platform,
        agent_version: "1.4.0",
        hardware_id: `HW-${crypto.randomUUID()}`,
        os_version: osVersion,
        ...extra,
      },
    });
    if (answer.status !== 201) throw new Error(`enrolling ${name}: ${JSON.stringify(answer.body)}`);
    return answer.body as { id: string; device_token: string };
  };
  for (const [name, platform, version] of [
    ["Atlas laptop", "macos", "14.4"],
    ["Cirrus desktop", "windows", "11"],
    ["Dover tablet", "ios", "17.1"],
  ] as const) {
    await enroll(name, platform, version);
  }
  const borealis = await enroll("Borealis phone of the finance department", "android", "9", {
    csr: makeCsr("p256").csr,
  });
  ids.device = borealis.id;
  // A phone without an agent, under the strict policy: its profile carries three payloads.
  const phone = await api("POST", "/api/v1/devices/phones", {
    device_name: "Eventide iPhone of the finance department",
    platform: "ios",
    policy_id: policy.id,
  });
  ids.phone = phone.device.id;
  const checkIn = await harness.api("POST", "/api/v1/agent/checkin", {
    token: borealis.device_token,
    body: {
      facts: {
        disk_encrypted: false,
        vpn_connected: false,
        usb_storage_blocked: false,
        screenshots_blocked: false,
        screen_lock_enabled: true,
        firewall_enabled: true,
      },
    },
  });
  expect(checkIn.status).toBe(200);
  await api("POST", `/api/v1/devices/${borealis.id}/wipe`, {
    reason: "Reported lost at the airport; the finance data on it must go",
    notify_user: true,
  });

  // People and keys, and the organization's single sign-on settings (saved off: no provider to discover).
  for (const [name, email, role] of [
    ["Olive Operator", "olive.operator@example.com", "operator"],
    ["Audrey Auditor of the compliance team", "audrey.auditor@compliance.example.com", "auditor"],
  ] as const) {
    await api("POST", "/api/v1/users", { name, email, role, password: "a-long-enough-password" });
  }
  await api("POST", "/api/v1/auth/api-keys", {
    name: "inventory sync for the asset database",
    scopes: ["devices:read", "devices:write", "policies:read", "audit:read"],
  });
  await api("PATCH", "/api/v1/organizations/current", {
    sso: {
      oidc: {
        enabled: false,
        issuer: "https://login.identity-provider.example.com/realms/finance-department",
        client_id: "bulwark-console-finance-department-production",
        redirect_uris: ["https://console.example.com/sso/callback"],
        allowed_domains: ["example.com", "compliance.example.com"],
      },
    },
  });

  await eventually("a delivery succeeded", async () => {
    const deliveries = await api("GET", `/api/v1/webhooks/${ids.webhook}/deliveries`);
    return (deliveries.data as { status: string }[]).some((delivery) => delivery.status === "succeeded");
  });
}, 120_000);

afterAll(async () => {
  await harness?.stop();
  receiver?.stop(true);
});

describe("the console at a phone's width", () => {
  test("the pages visited are every route of app.tsx", () => {
    const visited = [...new Set(consolePages().map((visit) => visit.route))].sort();
    expect(visited).toEqual(routesOfApp());
  });

  test("no page scrolls sideways, cuts a badge or breaks a table cell inside a word, at 390 and 320 px", async () => {
    const problems: string[] = [];
    const signedIn = await harness.newPage();
    await signInThroughForm(signedIn, harness.origin);
    const signedOut = await harness.newPage();
    await signedOut.goto(`${harness.origin}/console/sign-in`);
    for (const width of WIDTHS) {
      for (const page of [signedIn, signedOut]) await page.setViewportSize({ width, height: 844 });
      for (const [index, visit] of consolePages().entries()) {
        const page = visit.isPublic ? signedOut : signedIn;
        const screenshot = `widths ${width} ${index} ${visit.route}`;
        try {
          await goInsideConsole(page, visit.path);
          await settle(page, visit);
          const found = await layoutProblems(page);
          if (found.length > 0) {
            const file = await saveScreenshot(page, screenshot);
            problems.push(`${visit.path} at ${width} px (${file}):\n  ${found.slice(0, 8).join("\n  ")}`);
          }
        } catch (error) {
          const file = await saveScreenshot(page, screenshot);
          problems.push(`${visit.path} at ${width} px (${file}): ${(error as Error).message.split("\n")[0]}`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
