/**
 * GET /api/v1/devices/:id is answered by the fast lane (src/http/fast-lane.ts), outside Elysia. A query
 * string sends the same request through Elysia's route, which ignores the query: every answer of the
 * fast lane must be the one Elysia gives (status, body, headers, the log line and the rate-limit count).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createDeviceTestApp, enrollDevice } from "../helpers/devices";
import { createTestApp, inProcessTest, type TestApp } from "../helpers/test-app";

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

async function answer(app: TestApp, path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await app.fetch(path, { headers });
  const kept: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!VARYING_HEADERS.has(name)) kept[name] = value;
  const body = (await response.json()) as Record<string, unknown>;
  const requestId = response.headers.get("x-request-id");
  if ("request_id" in body) {
    expect(body.request_id).toBe(requestId);
    body.request_id = "<request id>";
  }
  return { status: response.status, headers: kept, body, requestId };
}

/** The fast lane's answer and Elysia's to the same request, which must be the same. */
async function bothWays(app: TestApp, path: string, headers: Record<string, string> = {}) {
  const fast = await answer(app, path, headers);
  const elysia = await answer(app, `${path}?through=elysia`, headers);
  expect(fast).toEqual({ ...elysia, requestId: fast.requestId });
  return fast;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

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
    const lineOf = (requestId: string | null) => {
      const line = t.logLines.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId);
      expect(line).toBeDefined();
      const { time, duration_ms, request_id, path, ...rest } = line;
      return rest;
    };
    expect(lineOf(fast.requestId)).toEqual(lineOf(elysia.requestId));
    expect(lineOf(fast.requestId)).toMatchObject({ route: "/api/v1/devices/:id", status: 200 });
    // A 404 of the route is labelled with the route, not as a path nothing answers.
    const unknown = "/api/v1/devices/00000000-0000-7000-8000-000000000000";
    const missing = await answer(t, unknown, bearer(org.adminToken));
    const missingViaElysia = await answer(t, `${unknown}?through=elysia`, bearer(org.adminToken));
    expect(lineOf(missing.requestId)).toEqual(lineOf(missingViaElysia.requestId));
    expect(lineOf(missing.requestId)).toMatchObject({ route: "/api/v1/devices/:id", status: 404 });
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
      expect(refused.headers["retry-after"]).toMatch(/^\d+$/);
    } finally {
      await limited.close();
    }
  });

  inProcessTest(
    "the device read is answered without Elysia; other shapes of the path still go to it",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const handle = t.app.handle;
      let throughElysia = 0;
      t.app.handle = (request: Request) => {
        throughElysia++;
        return handle.call(t.app, request);
      };
      try {
        const read = await t.fetch(`/api/v1/devices/${enrolled.id}`, { headers: bearer(org.adminToken) });
        expect([read.status, throughElysia]).toEqual([200, 0]);
        for (const other of [
          `/api/v1/devices/${enrolled.id}/`,
          `/api/v1/devices/${enrolled.id}?x=1`,
          "/api/v1/devices/summary",
        ]) {
          await t.fetch(other, { headers: bearer(org.adminToken) });
        }
        await t.fetch(`/api/v1/devices/${enrolled.id}`, { method: "HEAD", headers: bearer(org.adminToken) });
        expect(throughElysia).toBe(4);
      } finally {
        t.app.handle = handle;
      }
    },
  );
});
