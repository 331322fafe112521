/**
 * GET /api/v1/devices/:id, a locked-out sign-in and a plain check-in are answered by the fast lane
 * (src/http/fast-lane.ts), outside Elysia. A query string sends the same request through Elysia's route,
 * which ignores the query: every answer of the fast lane must be the one Elysia gives (status, body,
 * headers, the log line and the rate-limit count).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { observeRequests } from "../../src/http/observe-requests";
import { rememberPeer } from "../../src/http/request-path";
import { TlsClients } from "../../src/http/tls-front";
import { createDeviceTestApp, enrollDevice, HEALTHY_FACTS, wipeDevice } from "../helpers/devices";
import {
  createTestApp,
  inProcessTest,
  requestLogEntry,
  TEST_PASSWORD,
  type TestApp,
} from "../helpers/test-app";

const t = await createDeviceTestApp();
afterAll(() => t.close());

/** Headers that differ between any two answers: the request id, the clock and the remaining budget. */
const VARYING_HEADERS = new Set(["x-request-id", "date", "x-ratelimit-remaining"]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  requestId: string | null;
}

async function answer(
  app: TestApp,
  path: string,
  headers: Record<string, string>,
  init: RequestInit = {},
): Promise<Answer> {
  const response = await app.fetch(path, { headers, ...init });
  const kept: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!VARYING_HEADERS.has(name)) kept[name] = value;
  // The seconds left of a lockout may turn between two answers: a count of seconds is what is compared.
  if (kept["retry-after"]) kept["retry-after"] = kept["retry-after"].replace(/^\d+$/, "<seconds>");
  // So may the minute whose end x-ratelimit-reset names (the two requests can fall either side of it).
  const reset = kept["x-ratelimit-reset"];
  if (reset !== undefined) {
    expect(Number(reset) % 60).toBe(0);
    kept["x-ratelimit-reset"] = "<end of the minute>";
  }
  const text = await response.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  const requestId = response.headers.get("x-request-id");
  // Each answer's length is its own (a count of seconds in it may have one digit more).
  if (kept["content-length"] !== undefined) {
    expect(Number(kept["content-length"])).toBe(Buffer.byteLength(text));
    kept["content-length"] = "<its body's length>";
  }
  // A 429 says in its details how many seconds are left, which may turn between two answers too.
  if (typeof body.details === "string")
    body.details = body.details.replace(/retry in \d+ seconds/, "retry in <seconds> seconds");
  if ("request_id" in body) {
    expect(body.request_id).toBe(requestId);
    body.request_id = "<request id>";
  }
  return { status: response.status, headers: kept, body, requestId };
}

/** The fast lane's answer and Elysia's to the same request, which must be the same. */
async function bothWays(
  app: TestApp,
  path: string,
  headers: Record<string, string> = {},
  init: RequestInit = {},
) {
  const fast = await answer(app, path, headers, init);
  const elysia = await answer(app, `${path}?through=elysia`, headers, init);
  expect(fast).toEqual({ ...elysia, requestId: fast.requestId });
  return fast;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Counts the requests that reach Elysia's handle (in-process), until restore(). */
function countElysiaCalls(app: TestApp) {
  const handle = app.app.handle;
  let calls = 0;
  app.app.handle = (request: Request) => {
    calls++;
    return handle.call(app.app, request);
  };
  return {
    calls: () => calls,
    restore: () => {
      app.app.handle = handle;
    },
  };
}

describe("GET /devices/:id through the fast lane answers as the Elysia route does", () => {
  test("a device, with an access token and with an API key, also under its id in capitals", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const key = await t.createApiKey(org.adminToken, ["devices:read"]);
    const path = `/api/v1/devices/${enrolled.id}`;
    const byToken = await bothWays(t, path, bearer(org.adminToken));
    expect(byToken.status).toBe(200);
    expect(byToken.body).toMatchObject({ id: enrolled.id, device_name: enrolled.device_name });
    expect(byToken.headers["cache-control"]).toBe("no-store");
    expect((await bothWays(t, path, { "x-api-key": key })).body).toEqual(byToken.body);
    const upper = await bothWays(t, `/api/v1/devices/${enrolled.id.toUpperCase()}`, bearer(key));
    expect(upper.body).toEqual(byToken.body);
  });

  test("every refusal: no credential, a bad one, a missing scope, another organization's or no device", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const path = `/api/v1/devices/${enrolled.id}`;
    const cases: [Record<string, string>, number, string, string][] = [
      [{}, 401, path, "authentication_required"],
      [{ authorization: "Bearer" }, 401, path, "authorization_header_invalid"],
      [bearer("not-a-token"), 401, path, "token_invalid"],
      [bearer("bwk_not-a-key"), 401, path, "api_key_invalid"],
      [bearer(await t.createApiKey(org.adminToken, ["policies:read"])), 403, path, "scope_missing"],
      [bearer(enrolled.device_token), 401, path, "authentication_required"],
      [bearer(other.adminToken), 404, path, "device_not_found"],
      [
        bearer(org.adminToken),
        404,
        "/api/v1/devices/00000000-0000-7000-8000-000000000000",
        "device_not_found",
      ],
    ];
    for (const [headers, status, target, reason] of cases) {
      const refused = await bothWays(t, target, headers);
      expect([refused.status, refused.body.reason]).toEqual([status, reason]);
    }
  });

  test("the log line names the route, the principal and the status, as Elysia's does", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const fast = await answer(t, `/api/v1/devices/${enrolled.id}`, bearer(org.adminToken));
    const elysia = await answer(t, `/api/v1/devices/${enrolled.id}?through=elysia`, bearer(org.adminToken));
    const lineOf = async (requestId: string | null) => {
      const { time, duration_ms, request_id, path, ...rest } = await requestLogEntry(t, requestId);
      return rest;
    };
    expect(await lineOf(fast.requestId)).toEqual(await lineOf(elysia.requestId));
    expect(await lineOf(fast.requestId)).toMatchObject({ route: "/api/v1/devices/:id", status: 200 });
    // A 404 of the route is labelled with the route, not as a path nothing answers.
    const unknown = "/api/v1/devices/00000000-0000-7000-8000-000000000000";
    const missing = await answer(t, unknown, bearer(org.adminToken));
    const missingViaElysia = await answer(t, `${unknown}?through=elysia`, bearer(org.adminToken));
    expect(await lineOf(missing.requestId)).toEqual(await lineOf(missingViaElysia.requestId));
    expect(await lineOf(missing.requestId)).toMatchObject({ route: "/api/v1/devices/:id", status: 404 });
  });

  test("both count against one budget, and the 429 past it is the same", async () => {
    const limited = await createTestApp({ rate_limit: { authenticated_per_minute: 4 } });
    try {
      const org = await limited.createOrganization();
      const path = "/api/v1/devices/00000000-0000-7000-8000-000000000000";
      const remaining: string[] = [];
      for (const target of [path, `${path}?through=elysia`]) {
        const response = await limited.fetch(target, { headers: bearer(org.adminToken) });
        remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
      }
      expect(Number(remaining[0]) - Number(remaining[1])).toBe(1);
      for (let spent = 0; spent < 4; spent++) await limited.fetch(path, { headers: bearer(org.adminToken) });
      const refused = await bothWays(limited, path, bearer(org.adminToken));
      expect(refused.status).toBe(429);
      expect(refused.headers["retry-after"]).toBe("<seconds>");
    } finally {
      await limited.close();
    }
  });

  inProcessTest(
    "the device read is answered without Elysia; other shapes of the path still go to it",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const elysia = countElysiaCalls(t);
      try {
        const read = await t.fetch(`/api/v1/devices/${enrolled.id}`, { headers: bearer(org.adminToken) });
        expect([read.status, elysia.calls()]).toEqual([200, 0]);
        for (const other of [
          `/api/v1/devices/${enrolled.id}/`,
          `/api/v1/devices/${enrolled.id}?x=1`,
          "/api/v1/devices/summary",
        ]) {
          await t.fetch(other, { headers: bearer(org.adminToken) });
        }
        await t.fetch(`/api/v1/devices/${enrolled.id}`, { method: "HEAD", headers: bearer(org.adminToken) });
        expect(elysia.calls()).toBe(4);
      } finally {
        elysia.restore();
      }
    },
  );
});

describe("POST /auth/login of a locked-out pair through the fast lane answers as the Elysia route does", () => {
  const LOGIN = "/api/v1/auth/login";
  const json = { "content-type": "application/json" };
  const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
  /** The headers of a sent body: its type and, as a client on the network sends it, its length. */
  const sent = (body: unknown, type = "application/json") => ({
    "content-type": type,
    "content-length": String(Buffer.byteLength(typeof body === "string" ? body : JSON.stringify(body))),
  });

  /** An organization whose admin's (email, address) pair has used up its attempts. */
  async function lockedOut(app: TestApp) {
    const email = (await app.createOrganization()).adminEmail;
    for (let attempt = 0; attempt < 6; attempt++)
      await app.fetch(LOGIN, { headers: json, ...post({ email, password: "wrong password" }) });
    return email;
  }

  test("the 429 with Retry-After, also for the right password, another spelling of the email and refresh_cookie", async () => {
    const email = await lockedOut(t);
    for (const body of [
      { email, password: "wrong password" },
      { email, password: TEST_PASSWORD },
      { email: ` ${email.toUpperCase()}`, password: TEST_PASSWORD, refresh_cookie: true },
    ]) {
      const refused = await bothWays(t, LOGIN, sent(body), post(body));
      expect([refused.status, refused.body.reason]).toEqual([429, "login_throttled"]);
    }
    const response = await t.fetch(LOGIN, { headers: json, ...post({ email, password: TEST_PASSWORD }) });
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(800);
  });

  test("a body the route would refuse is refused as it refuses it, locked out or not", async () => {
    const email = await lockedOut(t);
    const refusals: [unknown, string, number][] = [
      [{ email, password: TEST_PASSWORD, remember: true }, "application/json", 400],
      [{ email, password: "" }, "application/json", 400],
      [{ email, password: 7 }, "application/json", 400],
      [[email], "application/json", 400],
      [{ email, password: TEST_PASSWORD }, "text/plain", 415],
    ];
    for (const [body, type, status] of refusals) {
      const refused = await bothWays(t, LOGIN, sent(body, type), post(body));
      expect(refused.status).toBe(status);
    }
    const broken = await bothWays(t, LOGIN, sent('{"email": '), { method: "POST", body: '{"email": ' });
    expect([broken.status, broken.body.reason]).toEqual([400, "invalid_json"]);
  });

  test("a pair that is not locked out signs in, or is told the password is wrong, through Elysia with the body read", async () => {
    const email = (await t.createOrganization()).adminEmail;
    const wrongPassword = { email, password: "wrong password" };
    const wrong = await bothWays(t, LOGIN, sent(wrongPassword), post(wrongPassword));
    expect(wrong.status).toBe(401);
    const right = { email, password: TEST_PASSWORD };
    const response = await t.fetch(LOGIN, { headers: sent(right), ...post(right) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { user: { email: string } }).user.email).toBe(email);
  });

  inProcessTest("a locked pair is refused without Elysia; any other sign-in goes to it", async () => {
    const email = await lockedOut(t);
    const other = { email: (await t.createOrganization()).adminEmail, password: "wrong password" };
    const elysia = countElysiaCalls(t);
    try {
      const right = { email, password: TEST_PASSWORD };
      const refused = await t.fetch(LOGIN, { headers: sent(right), ...post(right) });
      expect([refused.status, elysia.calls()]).toEqual([429, 0]);
      await t.fetch(LOGIN, { headers: sent(other), ...post(other) });
      expect(elysia.calls()).toBe(1);
    } finally {
      elysia.restore();
    }
  });
});

describe("POST /agent/checkin through the fast lane answers as the Elysia route does", () => {
  const CHECK_IN = "/api/v1/agent/checkin";
  /** A body as an agent on the network sends it: JSON with its length. */
  const sent = (body: unknown, type = "application/json") => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return {
      headers: { "content-type": type, "content-length": String(Buffer.byteLength(text)) },
      init: { method: "POST", body: text },
    };
  };
  const checkInBothWays = (token: string | null, body: unknown, type?: string) => {
    const { headers, init } = sent(body, type);
    return bothWays(t, CHECK_IN, { ...headers, ...(token ? bearer(token) : {}) }, init);
  };

  test("a full report, with the policy id in capitals, gets the same answer and is stored the same", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const report = {
      agent_version: "4.1.0",
      os_version: "14.4",
      policy_id: enrolled.policy.id.toUpperCase(),
      policy_version: enrolled.policy.version,
      facts: HEALTHY_FACTS,
    };
    const answered = await checkInBothWays(enrolled.device_token, report);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ device_id: enrolled.id, policy: { id: enrolled.policy.id } });
    const stored = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(stored.body).toMatchObject({ agent_version: "4.1.0", os_version: "14.4", status: "online" });
    // An empty report, or no body at all, is a heartbeat: the same answer both ways too.
    expect((await checkInBothWays(enrolled.device_token, {})).status).toBe(200);
    expect((await checkInBothWays(enrolled.device_token, "")).status).toBe(200);
  });

  test("no token, a wrong one and a wiped device's (revoked) are refused as the route refuses them", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const missing = await checkInBothWays(null, { agent_version: "4.1.0" });
    expect([missing.status, missing.body.reason]).toEqual([401, "device_token_required"]);
    const wrong = await checkInBothWays("bwd_not-a-token", { agent_version: "4.1.0" });
    expect([wrong.status, wrong.body.reason]).toEqual([401, "device_token_invalid"]);
    await wipeDevice(t, org.adminToken, enrolled);
    const wiped = await checkInBothWays(enrolled.device_token, { agent_version: "4.1.0" });
    expect([wiped.status, wiped.body.reason]).toEqual([401, "device_token_revoked"]);
  });

  test("facts sent in any order are stored in the schema's order, as the route stores them", async () => {
    const org = await t.createOrganization();
    const reversed = Object.fromEntries(Object.entries(HEALTHY_FACTS).reverse());
    const storedFacts: string[] = [];
    for (const path of [CHECK_IN, `${CHECK_IN}?through=elysia`]) {
      const enrolled = await enrollDevice(t, org.adminToken);
      const { headers, init } = sent({ agent_version: "4.1.0", facts: reversed });
      const response = await t.fetch(path, {
        headers: { ...headers, ...bearer(enrolled.device_token) },
        ...init,
      });
      expect(response.status).toBe(200);
      const logged = await t.request("GET", `/api/v1/devices/${enrolled.id}/logs?event=device.checkin`, {
        token: org.adminToken,
      });
      storedFacts.push(JSON.stringify(logged.body.data[0].details.facts));
    }
    expect(storedFacts[0]).toBe(JSON.stringify(HEALTHY_FACTS));
    expect(storedFacts[1]).toBe(storedFacts[0]);
  });

  test("enforcement and facts the server does not know: the same answer both ways, stored the same", async () => {
    const org = await t.createOrganization();
    // Unknown facts among the known ones, and an entry's fields in another order than the schema's.
    const report = {
      facts: { kernel: "6.8.0", vpn_connected: true, diskEncrypted: true, disk_encrypted: false },
      enforcement: [
        { detail: "no compositor hook", outcome: "unsupported", setting: "dlp.screenshot_allowed" },
        { outcome: "enforced", setting: "usb.allowed" },
      ],
    };
    const stored: string[] = [];
    for (const path of [CHECK_IN, `${CHECK_IN}?through=elysia`]) {
      const enrolled = await enrollDevice(t, org.adminToken);
      const { headers, init } = sent(report);
      const response = await t.fetch(path, {
        headers: { ...headers, ...bearer(enrolled.device_token) },
        ...init,
      });
      expect(response.status).toBe(200);
      expect((await response.json()).ignored_facts).toEqual(["kernel", "diskEncrypted"]);
      const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
      const { facts, ignored_facts, enforcement } = device.body;
      stored.push(JSON.stringify({ facts, ignored_facts, settings: enforcement.settings }));
    }
    expect(JSON.parse(stored[0] as string)).toEqual({
      facts: { disk_encrypted: false, vpn_connected: true },
      ignored_facts: { kernel: "6.8.0", diskEncrypted: true },
      settings: [
        { setting: "dlp.screenshot_allowed", outcome: "unsupported", detail: "no compositor hook" },
        { setting: "usb.allowed", outcome: "enforced" },
      ],
    });
    expect(stored[1]).toBe(stored[0]);
    const enrolled = await enrollDevice(t, org.adminToken);
    const answered = await checkInBothWays(enrolled.device_token, report);
    expect(answered.body.ignored_facts).toEqual(["kernel", "diskEncrypted"]);
  });

  test("both count against the device's one budget once, whichever answers, and the 429 past it is the same", async () => {
    const limited = await createTestApp({
      rate_limit: { authenticated_per_minute: 6, unauthenticated_per_minute: 100_000 },
    });
    try {
      const org = await limited.createOrganization();
      const enrolled = await enrollDevice(limited, org.adminToken);
      const remaining: number[] = [];
      // A plain check-in (fast lane), one with an extra field (read here, answered by Elysia), and one
      // through Elysia's route.
      for (const [path, body] of [
        [CHECK_IN, { agent_version: "4.1.0" }],
        [CHECK_IN, { agent_version: "4.1.0", battery_health: "good" }],
        [`${CHECK_IN}?through=elysia`, { agent_version: "4.1.0" }],
      ] as const) {
        const { headers, init } = sent(body);
        const response = await limited.fetch(path, {
          headers: { ...headers, ...bearer(enrolled.device_token) },
          ...init,
        });
        expect(response.status).toBe(200);
        remaining.push(Number(response.headers.get("x-ratelimit-remaining")));
      }
      expect(remaining).toEqual([5, 4, 3]);
      for (let spent = 0; spent < 3; spent++) {
        const { headers, init } = sent({});
        await limited.fetch(CHECK_IN, { headers: { ...headers, ...bearer(enrolled.device_token) }, ...init });
      }
      const { headers, init } = sent({ agent_version: "4.1.0" });
      const refused = await bothWays(
        limited,
        CHECK_IN,
        { ...headers, ...bearer(enrolled.device_token) },
        init,
      );
      expect([refused.status, refused.headers["retry-after"]]).toEqual([429, "<seconds>"]);
    } finally {
      await limited.close();
    }
  });

  test("bodies it does not judge are answered by the route, with the body it read", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const answers: [unknown, string | undefined, number][] = [
      // A newer agent's field is ignored, at the top and among the facts.
      [{ agent_version: "4.2.0", battery_health: "good" }, undefined, 200],
      [{ facts: { ...HEALTHY_FACTS, secure_boot: true } }, undefined, 200],
      // An enforcement entry's unknown field is dropped; a fact whose value is not a scalar is refused.
      [{ enforcement: [{ setting: "tunnel", outcome: "enforced", since: "boot" }] }, undefined, 200],
      [{ enforcement: [{ setting: "tunnel", outcome: "maybe" }] }, undefined, 400],
      [{ facts: { secure_boot: { state: "on" } } }, undefined, 400],
      [{ facts: { ["n".repeat(65)]: true } }, undefined, 400],
      [{ agent_version: 42 }, undefined, 400],
      [{ policy_version: 0 }, undefined, 400],
      [{ policy_id: "not-a-uuid" }, undefined, 400],
      [{ facts: null }, undefined, 400],
      [[], undefined, 400],
      ['{"agent_version": ', undefined, 400],
      [{ agent_version: "4.2.0" }, "text/plain", 415],
      // An unpaired surrogate, written as JSON escapes it.
      ['{"agent_version": "4.2\\ud800"}', undefined, 400],
      // A byte-order mark before the JSON, and a JSON media type of the +json kind.
      [`\ufeff${JSON.stringify({ agent_version: "4.2.0" })}`, undefined, 200],
      [{ agent_version: "4.2.0" }, "application/vnd.agent+json", 200],
      // Nested deeper than any body the API accepts.
      [`{"facts": ${"[".repeat(70)}${"]".repeat(70)}}`, undefined, 400],
      // Past the 16 KiB the fast lane reads: the route reads it.
      [{ agent_version: "4.2.0", padding: "x".repeat(17_000) }, undefined, 200],
    ];
    for (const [body, type, status] of answers) {
      const answered = await checkInBothWays(enrolled.device_token, body, type);
      expect([JSON.stringify(body), answered.status]).toEqual([JSON.stringify(body), status]);
    }
    const stored = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(stored.body.agent_version).toBe("4.2.0");
  });

  test("the log line names the route and the device, as Elysia's does", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const { headers, init } = sent({ agent_version: "4.3.0" });
    const response = await t.fetch(CHECK_IN, {
      headers: { ...headers, ...bearer(enrolled.device_token) },
      ...init,
    });
    const requestId = response.headers.get("x-request-id");
    expect(await requestLogEntry(t, requestId)).toMatchObject({
      msg: "request",
      method: "POST",
      route: CHECK_IN,
      status: 200,
      principal: `device:${enrolled.id}`,
    });
  });

  inProcessTest(
    "a check-in the route accepts as it stands is answered without Elysia; others go to it",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const elysia = countElysiaCalls(t);
      try {
        const plain = sent({
          agent_version: "4.4.0",
          facts: HEALTHY_FACTS,
          policy_id: enrolled.policy.id.toUpperCase(),
          policy_version: enrolled.policy.version,
        });
        const answered = await t.fetch(CHECK_IN, {
          headers: { ...plain.headers, ...bearer(enrolled.device_token) },
          ...plain.init,
        });
        expect([answered.status, elysia.calls()]).toEqual([200, 0]);
        // Facts this server does not know and an enforcement report are answered here too.
        const reported = sent({
          facts: { ...HEALTHY_FACTS, secure_boot: true },
          enforcement: [{ setting: "tunnel", outcome: "enforced" }],
        });
        const withReport = await t.fetch(CHECK_IN, {
          headers: { ...reported.headers, ...bearer(enrolled.device_token) },
          ...reported.init,
        });
        expect([withReport.status, elysia.calls()]).toEqual([200, 0]);
        // The policy id in capitals is the device's policy: the agent has applied it.
        const policy = await t.request("GET", `/api/v1/devices/${enrolled.id}/policy`, {
          token: org.adminToken,
        });
        expect(policy.body.applied_version).toBe(enrolled.policy.version);
        // No body at all is an empty report, answered here too.
        const empty = sent("");
        const heartbeat = await t.fetch(CHECK_IN, {
          headers: { ...empty.headers, ...bearer(enrolled.device_token) },
          ...empty.init,
        });
        expect([heartbeat.status, elysia.calls()]).toEqual([200, 1]);
        // A body past 16 KiB is not read here, even one the route accepts.
        const padded = sent(`${JSON.stringify({ agent_version: "4.4.0" })}${" ".repeat(17_000)}`);
        const long = await t.fetch(CHECK_IN, {
          headers: { ...padded.headers, ...bearer(enrolled.device_token) },
          ...padded.init,
        });
        expect([long.status, elysia.calls()]).toEqual([200, 2]);
        const newer = sent({ agent_version: "4.4.0", battery_health: "good" });
        await t.fetch(CHECK_IN, {
          headers: { ...newer.headers, ...bearer(enrolled.device_token) },
          ...newer.init,
        });
        // Without a Content-Length (a chunked upload) the body is not read here.
        await t.fetch(CHECK_IN, {
          headers: { "content-type": "application/json", ...bearer(enrolled.device_token) },
          ...plain.init,
        });
        expect(elysia.calls()).toBe(4);
      } finally {
        elysia.restore();
      }
    },
  );
});

describe("behind Bulwark's own TLS front", () => {
  inProcessTest(
    "the client's address is the one the front knew when the request came, even if it hangs up while its body arrives",
    async () => {
      const app = await createTestApp();
      try {
        const clients = new TlsClients();
        app.deps.tlsClients = clients;
        const handle = observeRequests(app.app, app.deps);
        const email = (await app.createOrganization()).adminEmail;
        // A sign-in the fast lane reads and hands on to Elysia (not locked out), and a check-in it reads
        // and hands on (an extra field); each from a client of the front that is gone once its body is in.
        const bodies: [string, string][] = [
          ["/api/v1/auth/login", JSON.stringify({ email, password: "wrong password" })],
          ["/api/v1/agent/checkin", JSON.stringify({ agent_version: "4.1.0", extra: true })],
        ];
        for (const [index, [path, text]] of bodies.entries()) {
          const port = 40_000 + index;
          clients.set(port, { ip: "203.0.113.7", certificate: null });
          const bytes = new TextEncoder().encode(text);
          // The client is gone once its body has been read.
          const body = new ReadableStream<Uint8Array>(
            {
              pull(controller) {
                controller.enqueue(bytes);
                clients.delete(port);
                controller.close();
              },
            },
            { highWaterMark: 0 },
          );
          const request = new Request(`http://localhost${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", "content-length": String(bytes.length) },
            body,
          });
          rememberPeer(request, { address: "127.0.0.1", port });
          const response = await handle(request);
          const requestId = response.headers.get("x-request-id");
          const line = app.logLines
            .map((entry) => JSON.parse(entry))
            .find((entry) => entry.request_id === requestId);
          expect([path, line?.ip]).toEqual([path, "203.0.113.7"]);
        }
      } finally {
        await app.close();
      }
    },
  );
});
