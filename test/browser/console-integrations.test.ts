/**
 * The console's integration pages in a real browser, against the built executable: enrollment tokens
 * (the token and enroll command shown once, then revoked), webhooks (a test event reaching a real
 * receiver and its delivery in the table), and API keys (the key shown once, then revoked). What the
 * page shows is then used the way a device, a receiver or a script would use it. The server is a copy
 * of the executable in a folder of its own, so the test decides whether a Windows agent sits beside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { executablePath } from "../helpers/binary";
import {
  accessibilityViolations,
  type ConsoleHarness,
  signInThroughForm,
  startConsoleHarness,
  withScreenshotOnFailure,
} from "../helpers/console-browser";

interface Received {
  body: string;
  headers: Record<string, string>;
}

let harness: ConsoleHarness;
let receiver: ReturnType<typeof Bun.serve>;
const received: Received[] = [];
const serverFolder = mkdtempSync(join(tmpdir(), "bulwark-console-agent-"));
const served = join(serverFolder, "bulwark");
/**
 * What the server offers as its Windows agent: a stand-in, since the page only shows its digest and the
 * commands (test/binary/windows-build.test.ts serves the real build).
 */
const windowsAgent = join(serverFolder, "bulwark-windows-x64.exe");
const WINDOWS_STAND_IN = "MZ: a stand-in for bulwark-windows-x64.exe\n";

beforeAll(async () => {
  // A webhook receiver on loopback: the server accepts it only with allow_private_targets.
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      received.push({ body: await request.text(), headers: Object.fromEntries(request.headers.entries()) });
      return new Response("ok");
    },
  });
  copyFileSync(await executablePath(), served);
  writeFileSync(windowsAgent, WINDOWS_STAND_IN);
  harness = await startConsoleHarness({ BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" }, { binary: served });
}, 120_000);

afterAll(async () => {
  await harness?.stop();
  receiver?.stop(true);
  rmSync(serverFolder, { recursive: true, force: true });
});

async function signedInPage(
  path: string,
  options: Parameters<ConsoleHarness["newPage"]>[0] = {},
): Promise<Page> {
  const page = await harness.newPage(options);
  await signInThroughForm(page, harness.origin);
  await page.goto(`${harness.origin}/console${path}`);
  // The reload resumes the session with the refresh cookie: let it finish before anything navigates
  // again (an interrupted refresh leaves the browser with a token the server has already rotated).
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return page;
}

/**
 * Runs the enroll command exactly as the page shows it, in bash, with `curl` replaced by a function
 * that prints its arguments (and hostname and cat giving a known device): what curl would have sent.
 */
async function argumentsOfCommand(command: string): Promise<string[]> {
  const script = [
    `curl() { printf '%s\\0' "$@"; }`,
    "hostname() { echo kiosk-7; }",
    "cat() { echo 4c4c4544004d3510804bc4c04f4d3732; }",
    command,
  ].join("\n");
  const child = Bun.spawn(["bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
  const output = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  return output.split("\0").slice(0, -1);
}

/** Presses Refresh until the deliveries table shows `text` (the dispatcher sends within a second or so). */
async function refreshUntilDeliveryShows(page: Page, text: RegExp): Promise<void> {
  const table = page.getByRole("table", { name: /^Deliveries/ });
  for (let attempt = 0; attempt < 40; attempt++) {
    if ((await table.count()) > 0 && (await table.getByRole("row", { name: text }).count()) > 0) return;
    await page.waitForTimeout(250);
    await page.getByRole("button", { name: "Refresh" }).click();
  }
  throw new Error(`no delivery row matching ${text} after refreshing`);
}

describe("enrollment tokens", () => {
  test("a token created in the console enrolls a device with the command shown, and not once revoked", async () => {
    const token = await harness.adminToken();
    const policy = await harness.api("POST", "/api/v1/policies", {
      token,
      body: { name: "Kiosk laptops", description: "for the front desk" },
    });
    expect(policy.status).toBe(201);
    const page = await signedInPage("/enrollment-tokens");
    await withScreenshotOnFailure(page, "integrations enrollment token", async () => {
      await page.getByRole("heading", { name: "Enrollment tokens", level: 1 }).waitFor();
      await page.getByText("No enrollment tokens yet").waitFor();
      // The server runs with the example vpn.endpoint: the page says what that means for new devices.
      await page
        .getByRole("status")
        .filter({ hasText: "The VPN endpoint is still the example, vpn.example.com:51820." })
        .waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByLabel("Devices it may enroll").fill("2");
      await page.getByLabel("Policy (optional)").selectOption({ label: "Kiosk laptops" });
      await page.getByRole("button", { name: "Create token" }).click();
      await page.getByRole("heading", { name: "Token created" }).waitFor();
      await page.getByText("Copy it now: it won't be shown again.").waitFor();
      const value = await page.getByLabel("Enrollment token", { exact: true }).inputValue();
      expect(value).toStartWith("bwe_");
      // The two commands that enroll a Linux machine with the agent: fetch it from this server, enroll.
      const fetchAgent = await page.getByLabel("1. Fetch the agent").inputValue();
      expect(await page.getByLabel("2. Enroll with the agent").inputValue()).toBe(
        `sudo ./bulwark agent enroll --server ${harness.origin} --token ${value}`,
      );
      // The digest is in the command itself (read through the administrator's session), not fetched
      // beside the file from the same server: sha256sum's own reading of the served executable.
      const served256 = Bun.spawnSync(["sha256sum", served]).stdout.toString().split(" ")[0];
      expect(fetchAgent).toContain(`echo "${served256}  bulwark" | sha256sum -c`);
      expect(fetchAgent).not.toContain("download.sha256");
      // Beside them, the Windows commands for an elevated PowerShell: the file beside the server, its
      // digest read by the page (not fetched beside the file), then enroll and install the service.
      const windowsDigest = new Bun.CryptoHasher("sha256").update(WINDOWS_STAND_IN).digest("hex");
      const windowsUrl = `${harness.origin}/api/v1/agent/download?os=windows&arch=x64`;
      expect(await page.getByLabel("1. Fetch bulwark.exe").inputValue()).toBe(
        [
          `Invoke-WebRequest -UseBasicParsing -OutFile bulwark.exe "${windowsUrl}"`,
          `if ((Get-FileHash bulwark.exe -Algorithm SHA256).Hash -ne "${windowsDigest}") { Remove-Item bulwark.exe; throw "bulwark.exe is not the file this server offers: removed" }`,
        ].join("\n"),
      );
      expect(await page.getByLabel("2. Enroll with bulwark.exe and install its service").inputValue()).toBe(
        [
          `.\\bulwark.exe agent enroll --server ${harness.origin} --token ${value}`,
          ".\\bulwark.exe agent install-service",
        ].join("\n"),
      );
      // The address in the command serves that file.
      const windowsDownload = await fetch(windowsUrl);
      expect([windowsDownload.status, await windowsDownload.text()]).toEqual([200, WINDOWS_STAND_IN]);
      // What a device gets at enrollment, from the token's policy.
      const atEnrollment = page.getByRole("region", { name: "At enrollment: Kiosk laptops" });
      await atEnrollment.getByText("a wipe erases ~/Work").waitFor();
      await atEnrollment.getByText("USB storage drivers cannot load").waitFor();
      // Run as shown, by bash with the real curl and sha256sum: the file fetched is the executable
      // serving the page, and its checksum is confirmed.
      const folder = mkdtempSync(join(tmpdir(), "bulwark-agent-fetch-"));
      const fetched = Bun.spawn(["bash", "-euo", "pipefail", "-c", fetchAgent], {
        cwd: folder,
        stdout: "pipe",
        stderr: "pipe",
      });
      const checked = await new Response(fetched.stdout).text();
      expect([await fetched.exited, await new Response(fetched.stderr).text()]).toEqual([0, ""]);
      expect(checked).toBe("bulwark: OK\n");
      const agent = Bun.file(join(folder, "bulwark"));
      const running = Bun.file(served);
      expect(agent.size).toBe(running.size);
      expect(
        Buffer.compare(Buffer.from(await agent.arrayBuffer()), Buffer.from(await running.arrayBuffer())),
      ).toBe(0);
      expect(statSync(join(folder, "bulwark")).mode & 0o111).toBe(0o111);
      // A file changed on the way fails the check and is not made executable.
      const check = fetchAgent.split("\n")[1] ?? "";
      const tampered = mkdtempSync(join(tmpdir(), "bulwark-agent-tampered-"));
      writeFileSync(join(tampered, "bulwark"), "#!/bin/sh\necho owned\n", { mode: 0o644 });
      const swapped = Bun.spawnSync(["bash", "-euo", "pipefail", "-c", check], { cwd: tampered });
      expect(swapped.exitCode).not.toBe(0);
      expect(swapped.stdout.toString()).toContain("bulwark: FAILED");
      expect(statSync(join(tampered, "bulwark")).mode & 0o111).toBe(0);
      rmSync(tampered, { recursive: true, force: true });
      rmSync(folder, { recursive: true, force: true });
      // The curl-only enrollment stays available, folded away.
      await page.getByText("Without the agent: enroll with curl").click();
      const command = await page.getByLabel("Enroll command (Linux)").inputValue();
      expect(command).toContain(value);
      expect(await accessibilityViolations(page)).toEqual([]);

      // The command, run by a shell, sends this device's name and machine id with the token shown.
      const args = await argumentsOfCommand(command);
      expect(args.slice(0, 3)).toEqual(["-X", "POST", `${harness.origin}/api/v1/devices/enroll`]);
      expect(args[args.indexOf("-H") + 1]).toBe("content-type: application/json");
      const body = JSON.parse(args[args.indexOf("-d") + 1] ?? "");
      expect(body).toEqual({
        enrollment_token: value,
        device_name: "kiosk-7",
        platform: "linux",
        agent_version: "1.0.0",
        hardware_id: "4c4c4544004d3510804bc4c04f4d3732",
      });
      const enrolled = await harness.api("POST", "/api/v1/devices/enroll", { body });
      expect(enrolled.status).toBe(201);
      expect(enrolled.body.device_token).toBeString();

      // Listed with its use, its policy and its state; the value itself is gone for good.
      await page.getByRole("button", { name: "Done" }).click();
      await page.reload();
      const table = page.getByRole("table", { name: /^Enrollment tokens/ });
      const row = table.getByRole("row").filter({ hasText: "1 of 2" });
      await row.getByText("Kiosk laptops").waitFor();
      await row.getByText("Active").waitFor();
      expect(await page.getByText(value).count()).toBe(0);
      expect(await accessibilityViolations(page)).toEqual([]);

      await row.getByRole("button", { name: /^Revoke the token created/ }).click();
      const dialog = page.getByRole("dialog", { name: "Revoke this enrollment token?" });
      await dialog.getByText("The device already enrolled with it keeps working.").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await dialog.getByRole("button", { name: "Revoke token" }).click();
      await page.getByText("Enrollment token revoked").waitFor();
      await row.getByText("Revoked").waitFor();
      expect(await row.getByRole("button", { name: /^Revoke/ }).count()).toBe(0);

      const refused = await harness.api("POST", "/api/v1/devices/enroll", {
        body: { ...body, hardware_id: "another-machine", device_name: "kiosk-8" },
      });
      expect(refused.status).toBe(401);
    });
  }, 60_000);

  test("a value out of range is shown next to its field", async () => {
    const page = await signedInPage("/enrollment-tokens");
    await withScreenshotOnFailure(page, "integrations enrollment token invalid", async () => {
      await page.getByRole("button", { name: "Create token" }).waitFor();
      // The browser's own range check is bypassed so the server's answer is what the user sees.
      await page.locator("form").evaluate((form) => form.setAttribute("novalidate", ""));
      await page.getByLabel("Expires after (hours)").fill("9000");
      await page.getByRole("button", { name: "Create token" }).click();
      const field = page.getByLabel("Expires after (hours)");
      await page.locator('[aria-invalid="true"]').waitFor();
      expect(await field.getAttribute("aria-invalid")).toBe("true");
      expect(await page.getByRole("heading", { name: "Token created" }).count()).toBe(0);
    });
  }, 30_000);

  test("without a Windows agent beside the server, the page says so and where it goes, with no command", async () => {
    rmSync(windowsAgent);
    try {
      const page = await signedInPage("/enrollment-tokens");
      await withScreenshotOnFailure(page, "integrations enrollment token no windows agent", async () => {
        await page.getByRole("button", { name: "Create token" }).click();
        await page.getByRole("heading", { name: "Token created" }).waitFor();
        await page.getByLabel("1. Fetch the agent").waitFor();
        await page
          .getByRole("note")
          .filter({
            hasText: `This server offers no Windows agent: put bulwark-windows-x64.exe in ${serverFolder}, beside this server's executable`,
          })
          .waitFor();
        const commands = await page
          .locator("textarea")
          .evaluateAll((areas) => areas.map((area) => (area as HTMLTextAreaElement).value));
        expect(commands.filter((command) => command.includes("bulwark.exe"))).toEqual([]);
        expect(commands.some((command) => command.includes("sudo ./bulwark agent enroll"))).toBe(true);
        expect(await accessibilityViolations(page)).toEqual([]);
      });
    } finally {
      writeFileSync(windowsAgent, WINDOWS_STAND_IN);
    }
  }, 30_000);
});

describe("webhooks", () => {
  test("a webhook added in the console receives a signed test event, shown in its deliveries", async () => {
    const page = await signedInPage("/webhooks");
    const url = `http://127.0.0.1:${receiver.port}/hooks/bulwark`;
    await withScreenshotOnFailure(page, "integrations webhook", async () => {
      await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
      await page.getByText("No webhooks yet").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByLabel("URL", { exact: true }).fill(url);
      await page.getByLabel("device.enrolled", { exact: true }).check();
      await page.getByLabel("webhook.test", { exact: true }).check();
      await page.getByRole("button", { name: "Generate" }).click();
      const secret = await page.getByLabel("Signing secret", { exact: true }).inputValue();
      expect(secret.length).toBeGreaterThanOrEqual(32);
      await page.getByRole("button", { name: "Add webhook" }).click();
      await page.getByRole("heading", { name: "Webhook added" }).waitFor();
      await page.getByText("Copy the signing secret now: it won't be shown again.").waitFor();
      expect(await page.getByLabel("Signing secret", { exact: true }).inputValue()).toBe(secret);
      const listed = page
        .getByRole("table", { name: /^Webhooks/ })
        .getByRole("row")
        .filter({ hasText: url });
      await listed.getByText("device.enrolled, webhook.test").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByRole("link", { name: "Open it and send a test event" }).click();
      await page.getByRole("heading", { name: `Webhook to 127.0.0.1:${receiver.port}`, level: 1 }).waitFor();
      await page.getByText("No deliveries yet").waitFor();
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.getByText("Test event queued").waitFor();
      await refreshUntilDeliveryShows(page, /webhook\.test.*Succeeded/);
      const delivery = page
        .getByRole("table", { name: /^Deliveries/ })
        .getByRole("row", { name: /webhook\.test/ });
      await delivery.getByRole("cell", { name: "200", exact: true }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      // The receiver got it, signed with the secret the page showed.
      const testEvents = () => received.filter((item) => item.headers["x-service-event"] === "webhook.test");
      const request = testEvents()[0];
      expect(request).toBeDefined();
      const signature = `sha256=${createHmac("sha256", secret)
        .update(request?.body ?? "")
        .digest("hex")}`;
      expect(request?.headers["x-service-signature"]).toBe(signature);

      // A rotated secret is shown once, and the next delivery is signed with it.
      await page.getByRole("button", { name: "Generate" }).click();
      const rotated = await page.getByLabel("New signing secret").inputValue();
      expect(rotated).not.toBe(secret);
      await page.getByRole("button", { name: "Rotate secret…" }).click();
      await page
        .getByRole("dialog", { name: "Rotate the signing secret?" })
        .getByRole("button", { name: "Rotate secret" })
        .click();
      await page.getByText("Copy the new secret now: it won't be shown again.").waitFor();
      expect(await page.getByLabel("New signing secret").inputValue()).toBe(rotated);
      await page.getByRole("button", { name: "Send test event" }).click();
      for (let attempt = 0; attempt < 40 && testEvents().length < 2; attempt++) await Bun.sleep(250);
      const second = testEvents()[1];
      expect(second?.headers["x-service-signature"]).toBe(
        `sha256=${createHmac("sha256", rotated)
          .update(second?.body ?? "")
          .digest("hex")}`,
      );

      // Turned off, it can't be sent a test event; deleted, it is gone from the list.
      await page.getByLabel("Active", { exact: true }).uncheck();
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.getByText("Webhook saved").waitFor();
      await page.getByText("Turn it on to send a test event.").waitFor();
      expect(await page.getByRole("button", { name: "Send test event" }).isDisabled()).toBe(true);
      await page.getByRole("button", { name: "Delete…" }).click();
      const dialog = page.getByRole("dialog", { name: "Delete this webhook?" });
      await dialog.getByText(url).waitFor();
      await dialog.getByRole("button", { name: "Delete webhook" }).click();
      await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
      await page.getByText("No webhooks yet").waitFor();
    });
  }, 60_000);
});

describe("API keys", () => {
  test("a key created in the console works against the API until it is revoked there", async () => {
    const page = await signedInPage("/api-keys");
    await withScreenshotOnFailure(page, "integrations api key", async () => {
      await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
      await page.getByText("No API keys yet").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      await page.getByLabel("Name", { exact: true }).fill("inventory sync");
      await page.getByLabel("devices:read", { exact: true }).check();
      await page.getByLabel("Expires after (days)").fill("30");
      await page.getByRole("button", { name: "Create key" }).click();
      await page.getByRole("heading", { name: "API key “inventory sync” created" }).waitFor();
      await page.getByText("Copy it now: it won't be shown again.").waitFor();
      const key = await page.getByLabel("API key", { exact: true }).inputValue();
      expect(key).toStartWith("bwk_");
      expect(await page.getByLabel("Example request").inputValue()).toContain(`Authorization: Bearer ${key}`);
      expect(await accessibilityViolations(page)).toEqual([]);

      expect((await harness.api("GET", "/api/v1/devices", { token: key })).status).toBe(200);
      const withHeader = await fetch(`${harness.origin}/api/v1/devices`, { headers: { "x-api-key": key } });
      expect(withHeader.status).toBe(200);
      // Only the scopes chosen: it may read devices but not the audit log.
      expect((await harness.api("GET", "/api/v1/audit-logs", { token: key })).status).toBe(403);

      await page.getByRole("button", { name: "Done" }).click();
      const row = page
        .getByRole("table", { name: /^API keys/ })
        .getByRole("row")
        .filter({ hasText: "inventory sync" });
      await row.getByText("devices:read").waitFor();
      await row.getByText("Active").waitFor();
      await row.getByRole("button", { name: "Revoke inventory sync" }).click();
      const dialog = page.getByRole("dialog", { name: "Revoke this API key?" });
      await dialog.getByRole("button", { name: "Revoke key" }).click();
      await page.getByText("API key “inventory sync” revoked").waitFor();
      await row.getByText("Revoked").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);

      expect((await harness.api("GET", "/api/v1/devices", { token: key })).status).toBe(401);
    });
  }, 60_000);
});

describe("at phone width in dark mode", () => {
  test("every integration page has no accessibility violations and scrolls only inside its tables", async () => {
    const token = await harness.adminToken();
    await harness.api("POST", "/api/v1/enrollment-tokens", { token, body: { max_uses: null } });
    await harness.api("POST", "/api/v1/auth/api-keys", {
      token,
      body: { name: "phone check", scopes: ["admin"] },
    });
    const webhook = await harness.api("POST", "/api/v1/webhooks", {
      token,
      body: {
        url: `http://127.0.0.1:${receiver.port}/phone`,
        events: ["*"],
        secret: "a-secret-of-some-length",
      },
    });
    expect(webhook.status).toBe(201);
    expect((await harness.api("POST", `/api/v1/webhooks/${webhook.body.id}/test`, { token })).status).toBe(
      202,
    );

    const page = await signedInPage("/", { colorScheme: "dark" });
    await page.setViewportSize({ width: 390, height: 844 });
    await withScreenshotOnFailure(page, "integrations phone dark", async () => {
      const pages: [string, string][] = [
        ["/enrollment-tokens", "Enrollment tokens"],
        ["/webhooks", "Webhooks"],
        [`/webhooks/${webhook.body.id}`, "Deliveries"],
        ["/api-keys", "API keys"],
      ];
      for (const [path, table] of pages) {
        await page.goto(`${harness.origin}/console${path}`);
        await page.getByRole("table", { name: new RegExp(`^${table}`) }).waitFor();
        expect(await accessibilityViolations(page)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      }
    });
  }, 60_000);
});
