/**
 * The console as a browser receives it: `/` leads to it, every console path answers its page (the page
 * routes itself), its files are compressed and cached for good, the page carries a Content-Security-Policy
 * that keeps it to its own script and this server, and the first load stays under 150 KB compressed.
 */
import { describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { freshTestApps, type TestApp } from "../helpers/test-app";

const newApp = freshTestApps();
/** The budget for a first load: JavaScript and CSS, compressed. */
const FIRST_LOAD_BUDGET_BYTES = 150 * 1024;

/** The files the page loads: its <script src> and <link rel=stylesheet href>. */
function filesOf(page: string): string[] {
  return [...page.matchAll(/(?:src|href)="(\/console\/[^"]+\.(?:js|css))"/g)].map((match) => match[1] ?? "");
}

/** The bytes on the wire: the executable's fetch would otherwise decompress them for us. */
async function wireBytes(t: TestApp, path: string, encoding: string) {
  const response = await t.fetch(path, {
    headers: { "accept-encoding": encoding },
    decompress: false,
  } as RequestInit);
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

describe("the console", () => {
  test("/ and /console lead to /console/, which answers the page with a strict security policy", async () => {
    const t = await newApp();
    for (const path of ["/", "/console"]) {
      const response = await t.fetch(path, { redirect: "manual" });
      expect(response.status).toBe(302);
      expect(response.headers.get("location")).toBe("/console/");
    }
    const response = await t.fetch("/console/", {});
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    // The page is revalidated on every load, so a new version's files are picked up at once.
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const page = await response.text();
    expect(page).toContain('<div id="app">');
    expect(filesOf(page).length).toBeGreaterThanOrEqual(2);
  });

  test("every console path answers the same page, and the page's files are served under /console/", async () => {
    const t = await newApp();
    const home = await (await t.fetch("/console/", {})).text();
    const deep = await t.fetch("/console/devices/0b6a5bd2-1f0e-4a43-9a07-5d3f0f3e1d11?status=online", {});
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(home);
    for (const file of filesOf(home)) {
      const response = await t.fetch(file, {});
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain(file.endsWith(".js") ? "javascript" : "css");
      // Hash-named: a year in any cache, never fetched again until a new version names new files.
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
  });

  test("a file the console does not have is a JSON 404, not the page", async () => {
    const t = await newApp();
    const response = await t.request("GET", "/console/chunk-0ld0ld0l.js");
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 404, reason: "route_not_found" });
    expect(response.body.details).toContain("/console/chunk-0ld0ld0l.js");
  });

  test("files are sent brotli- or gzip-compressed as the browser accepts, and a matching ETag is a 304", async () => {
    const t = await newApp();
    const [script] = filesOf(await (await t.fetch("/console/", {})).text()).filter((file) =>
      file.endsWith(".js"),
    );
    const plain = await wireBytes(t, script ?? "", "identity");
    expect(plain.response.headers.get("content-encoding")).toBeNull();
    const gzip = await wireBytes(t, script ?? "", "gzip");
    expect(gzip.response.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(gzip.bytes)).toEqual(Buffer.from(plain.bytes));
    const brotli = await wireBytes(t, script ?? "", "gzip, deflate, br");
    expect(brotli.response.headers.get("content-encoding")).toBe("br");
    expect(brotli.bytes.length).toBeLessThan(gzip.bytes.length);
    expect(brotli.response.headers.get("vary")).toContain("Accept-Encoding");

    const etag = plain.response.headers.get("etag") ?? "";
    const again = await t.fetch(script ?? "", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
  });

  test("the first load (page, script and style) is under 150 KB compressed", async () => {
    const t = await newApp();
    const page = await wireBytes(t, "/console/", "gzip");
    let total = page.bytes.length;
    const text = new TextDecoder().decode(gunzipSync(page.bytes));
    for (const file of filesOf(text)) total += (await wireBytes(t, file, "gzip")).bytes.length;
    expect(total).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
  });

  test("loading the console does not use up the per-address budget that guards sign-in", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 5 } });
    for (let index = 0; index < 5; index++) expect((await t.fetch("/console/", {})).status).toBe(200);
    const login = await t.request("POST", "/api/v1/auth/login", {
      body: { email: "nobody@example.com", password: "wrong-password-1" },
    });
    expect(login.status).toBe(401);
  });
});
