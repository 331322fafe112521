/**
 * Makes docs/console-devices.png, the README's picture of the console: dist/bulwark with a small fleet
 * (enrolled, checked in, one suspended, one non-compliant), photographed by Debian's Chromium at
 * 1280x800. Run it after `npm run build`: `bun run scripts/console-screenshot.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { jsonRequest } from "../test/helpers/json-request";

const ROOT = join(import.meta.dir, "..");
const ADMIN = { email: "it@example.com", password: "correct-horse-battery" };
const FLEET: [string, string, string][] = [
  ["Ana's MacBook Pro", "macos", "14.5"],
  ["Reception iPad", "ios", "17.4"],
  ["Build server 02", "linux", "6.8"],
  ["Finance ThinkPad 07", "windows", "11"],
  ["Marco's Pixel 8", "android", "14"],
  ["Warehouse scanner 3", "android", "13"],
  ["Design iMac", "macos", "13.6"],
  ["Sales Surface 12", "windows", "10"],
  ["Kiosk lobby", "linux", "6.1"],
  ["Lea's iPhone 15", "ios", "17.5"],
  ["Support laptop 04", "windows", "11"],
  ["CTO MacBook Air", "macos", "14.4"],
];

const folder = mkdtempSync(join(tmpdir(), "bulwark-screenshot-"));
const server = Bun.spawn([join(ROOT, "dist", "bulwark"), "serve"], {
  cwd: folder,
  env: {
    PATH: process.env.PATH ?? "",
    BULWARK_SERVER_PORT: "0",
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_LOG_LEVEL: "warn",
  },
  stdout: "pipe",
});
try {
  let output = "";
  for await (const chunk of server.stdout) {
    output += new TextDecoder().decode(chunk);
    if (/listening on/.test(output)) break;
  }
  const port = /listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1];
  const origin = `http://localhost:${port}`;
  const api = (method: string, path: string, options: { token?: string; body?: unknown } = {}) =>
    jsonRequest(origin, method, path, options);

  const token = (await api("POST", "/api/v1/auth/login", { body: ADMIN })).body.token as string;
  const enrollment = await api("POST", "/api/v1/enrollment-tokens", { token, body: { max_uses: null } });
  const healthy = {
    disk_encrypted: true,
    vpn_connected: true,
    screen_lock_enabled: true,
    firewall_enabled: true,
    usb_storage_blocked: true,
    screenshots_blocked: true,
  };
  for (const [index, [name, platform, osVersion]] of FLEET.entries()) {
    const enrolled = await api("POST", "/api/v1/devices/enroll", {
      body: {
        enrollment_token: enrollment.body.token,
        device_name: name,
        platform,
        agent_version: "1.4.0",
        hardware_id: `HW-${index}`,
        os_version: osVersion,
      },
    });
    const facts = name === "Sales Surface 12" ? { ...healthy, disk_encrypted: false } : healthy;
    if (name !== "Warehouse scanner 3")
      await api("POST", "/api/v1/agent/checkin", { token: enrolled.body.device_token, body: { facts } });
    if (name === "Kiosk lobby")
      await api("PUT", `/api/v1/devices/${enrolled.body.id}/status`, {
        token,
        body: { status: "suspended", reason: "Lobby closed for renovation" },
      });
  }

  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  await page.goto(`${origin}/console/`);
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await page.goto(`${origin}/console/devices`);
  await page.getByRole("link", { name: "CTO MacBook Air" }).waitFor();
  await page.getByRole("checkbox", { name: /Finance ThinkPad 07/ }).check();
  await page.getByRole("checkbox", { name: /Sales Surface 12/ }).check();
  await page.screenshot({ path: join(ROOT, "docs", "console-devices.png") });
  await browser.close();
  console.log("wrote docs/console-devices.png");
} finally {
  server.kill();
  await server.exited;
  rmSync(folder, { recursive: true, force: true });
}
