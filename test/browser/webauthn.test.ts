/**
 * Passkeys and security keys end to end, against a real authenticator nobody here wrote: Debian's
 * Chromium with its virtual authenticator (the DevTools protocol's WebAuthn domain), driven by
 * playwright-core, signing in to the built executable. The browser parses our options with
 * PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON and sends back
 * credential.toJSON(), exactly as a web page would. Also: the TOTP QR code, rendered by Chromium and
 * read by zbarimg. scripts/test-tools.ts installs chromium and zbar-tools when they are missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type CDPSession, chromium, type Page } from "playwright-core";
import { executablePath, type RunningServer, startServer } from "../helpers/binary";
import { jsonRequest } from "../helpers/json-request";

const ADMIN = { email: "passkeys@example.com", password: "correct-horse-battery" };
const CHROMIUM = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? "/usr/bin/chromium";

let folder: string;
let server: RunningServer;
let origin: string;
let browser: Browser;
let page: Page;
let devtools: CDPSession;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "bulwark-webauthn-"));
  server = await startServer(await executablePath(), folder, {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
  });
  // With no base_url the server names loopback localhost: the relying party id a browser accepts.
  origin = `http://localhost:${new URL(server.url).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  page = await browser.newPage();
  // A page of the server's own origin: WebAuthn binds credentials to it (http://localhost is secure).
  await page.goto(`${origin}/api/v1/health`);
  devtools = await page.context().newCDPSession(page);
  await devtools.send("WebAuthn.enable");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

function api(method: string, path: string, options: { token?: string; body?: unknown } = {}) {
  return jsonRequest(origin, method, path, options);
}

/** Every virtual authenticator added so far (the DevTools protocol has no call to list them). */
const authenticators: string[] = [];

async function addAuthenticator(): Promise<string> {
  const { authenticatorId } = await devtools.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "usb",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  authenticators.push(authenticatorId);
  return authenticatorId;
}

/** The browser's WebAuthn API as the page sees it (the project's TypeScript has no DOM library). */
interface PageWebAuthn {
  PublicKeyCredential: {
    parseCreationOptionsFromJSON(json: unknown): unknown;
    parseRequestOptionsFromJSON(json: unknown): unknown;
  };
  navigator: {
    credentials: {
      create(options: { publicKey: unknown }): Promise<{ toJSON(): unknown }>;
      get(options: { publicKey: unknown }): Promise<{ toJSON(): unknown }>;
    };
  };
}

/** navigator.credentials.create in the page, from our options JSON; returns credential.toJSON(). */
function createCredential(options: unknown): Promise<unknown> {
  return page.evaluate(async (json) => {
    const browser = globalThis as unknown as PageWebAuthn;
    const publicKey = browser.PublicKeyCredential.parseCreationOptionsFromJSON(json);
    return (await browser.navigator.credentials.create({ publicKey })).toJSON();
  }, options);
}

/** navigator.credentials.get in the page; returns credential.toJSON(). */
function getAssertion(options: unknown): Promise<unknown> {
  return page.evaluate(async (json) => {
    const browser = globalThis as unknown as PageWebAuthn;
    const publicKey = browser.PublicKeyCredential.parseRequestOptionsFromJSON(json);
    return (await browser.navigator.credentials.get({ publicKey })).toJSON();
  }, options);
}

async function passwordStep(): Promise<{ mfa_token: string; mfa_methods: string[] }> {
  const login = await api("POST", "/api/v1/auth/login", { body: ADMIN });
  expect(login.status).toBe(200);
  expect(login.body.mfa_required).toBe(true);
  return login.body;
}

async function requestOptions(mfaToken: string) {
  const options = await api("POST", "/api/v1/auth/mfa/webauthn/authentication-options", {
    body: { mfa_token: mfaToken },
  });
  expect(options.status).toBe(200);
  expect(options.headers.get("cache-control")).toBe("no-store");
  return options.body;
}

test("the TOTP QR code, rendered by Chromium, reads back as the otpauth URL with zbarimg", async () => {
  // First in the file: the admin has no second factor yet, so the password alone signs in.
  const session = (await api("POST", "/api/v1/auth/login", { body: ADMIN })).body.token;
  const enrolment = await api("POST", "/api/v1/auth/mfa/totp", { token: session });
  expect(enrolment.status).toBe(200);

  const qrPage = await browser.newPage();
  await qrPage.setContent(
    `<body style="margin:0;background:#fff"><div id="qr" style="width:400px;height:400px">${enrolment.body.qr_svg}</div></body>`,
  );
  const png = join(folder, "qr.png");
  await qrPage.locator("#qr").screenshot({ path: png });
  await qrPage.close();
  const scan = Bun.spawnSync(["zbarimg", "--raw", "-q", png]);

  expect(scan.exitCode).toBe(0);
  expect(scan.stdout.toString().trim()).toBe(enrolment.body.otpauth_url);
}, 30_000);

describe("WebAuthn with Chromium's virtual authenticator", () => {
  let token: string;
  let firstAuthenticator: string;
  let firstAssertion: unknown;

  test("a security key registers from our creation options and turns MFA on", async () => {
    token = (await api("POST", "/api/v1/auth/login", { body: ADMIN })).body.token;
    firstAuthenticator = await addAuthenticator();

    const options = await api("POST", "/api/v1/auth/mfa/webauthn/registration-options", { token });
    expect(options.status).toBe(200);
    expect(options.headers.get("cache-control")).toBe("no-store");
    expect(options.body.rp).toEqual({ name: "Bulwark", id: "localhost" });
    expect(options.body.user.name).toBe(ADMIN.email);

    const credential = await createCredential(options.body);
    const registered = await api("POST", "/api/v1/auth/mfa/webauthn", {
      token,
      body: { name: "Virtual key", response: credential },
    });

    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ type: "webauthn", name: "Virtual key" });
    expect(registered.body.recovery_codes).toHaveLength(10);
  }, 30_000);

  test("sign-in: the password gives a challenge, the authenticator's assertion gives the tokens", async () => {
    const challenge = await passwordStep();
    expect(challenge.mfa_methods).toEqual(["webauthn"]);
    const options = await requestOptions(challenge.mfa_token);
    expect(options.rpId).toBe("localhost");
    expect(options.allowCredentials).toHaveLength(1);

    firstAssertion = await getAssertion(options);
    const verified = await api("POST", "/api/v1/auth/mfa/verify", {
      body: { mfa_token: challenge.mfa_token, method: "webauthn", code: JSON.stringify(firstAssertion) },
    });

    expect(verified.status).toBe(200);
    expect(verified.body.token_type).toBe("Bearer");
    expect((await api("GET", "/api/v1/users/me", { token: verified.body.token })).status).toBe(200);
  }, 30_000);

  test("a replayed assertion is refused: it answers an old challenge", async () => {
    const challenge = await passwordStep();
    const unasked = await api("POST", "/api/v1/auth/mfa/verify", {
      body: { mfa_token: challenge.mfa_token, method: "webauthn", code: JSON.stringify(firstAssertion) },
    });
    expect(unasked.status).toBe(400);
    expect(unasked.body.reason).toBe("webauthn_options_required");
    await requestOptions(challenge.mfa_token);

    const replay = await api("POST", "/api/v1/auth/mfa/verify", {
      body: { mfa_token: challenge.mfa_token, method: "webauthn", code: JSON.stringify(firstAssertion) },
    });

    expect(replay.status).toBe(401);
    expect(replay.body.reason).toBe("mfa_code_invalid");
  }, 30_000);

  test("a second, named authenticator registers beside the first; the first is not registered twice", async () => {
    const options = await api("POST", "/api/v1/auth/mfa/webauthn/registration-options", { token });
    expect(options.body.excludeCredentials).toHaveLength(1);
    await devtools.send("WebAuthn.setAutomaticPresenceSimulation", {
      authenticatorId: firstAuthenticator,
      enabled: false,
    });
    await addAuthenticator();

    const credential = await createCredential(options.body);
    const registered = await api("POST", "/api/v1/auth/mfa/webauthn", {
      token,
      body: { name: "Backup key", response: credential },
    });

    expect(registered.status).toBe(201);
    expect(registered.body.recovery_codes).toBeUndefined();
    const status = await api("GET", "/api/v1/auth/mfa", { token });
    expect(status.body.methods.map((method: { name: string }) => method.name)).toEqual([
      "Virtual key",
      "Backup key",
    ]);
  }, 30_000);

  test("a cloned authenticator whose signature counter went back is refused", async () => {
    const { credentials } = await devtools.send("WebAuthn.getCredentials", {
      authenticatorId: firstAuthenticator,
    });
    const original = credentials[0];
    if (!original) throw new Error("the first authenticator holds no credential");
    expect(original.signCount).toBeGreaterThan(0);
    // Only the clone answers from now on: the same key pair, its counter back at 0.
    await devtools.send("WebAuthn.clearCredentials", { authenticatorId: firstAuthenticator });
    for (const authenticatorId of authenticators.splice(0))
      await devtools.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId });
    const clone = await addAuthenticator();
    await devtools.send("WebAuthn.addCredential", {
      authenticatorId: clone,
      credential: { ...original, signCount: 0 },
    });

    const challenge = await passwordStep();
    const assertion = await getAssertion(await requestOptions(challenge.mfa_token));
    const verified = await api("POST", "/api/v1/auth/mfa/verify", {
      body: { mfa_token: challenge.mfa_token, method: "webauthn", code: JSON.stringify(assertion) },
    });

    expect(verified.status).toBe(401);
  }, 30_000);
});
