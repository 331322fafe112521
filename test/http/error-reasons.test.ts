/**
 * Every kind of failure answers the error body with a stable `reason` (what clients match on),
 * all made by the one error handler: typed domain errors, the body reader's refusals, the security
 * plugin's, and Elysia's own validation, routing and parsing errors.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { enrollDevice } from "../helpers/devices";
import { expectServerErrors } from "../helpers/server-errors";
import { freshTestApps, inProcessTest, type TestResponse } from "../helpers/test-app";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

function expectReason(response: TestResponse, status: number, reason: string) {
  expect({ status: response.status, reason: response.body?.reason }, JSON.stringify(response.body)).toEqual({
    status,
    reason,
  });
  expect(response.body.code).toBe(status);
  expect(typeof response.body.message).toBe("string");
  expect(response.body.request_id).toBe(response.headers.get("x-request-id"));
}

describe("reasons", () => {
  test("input refused before any rule: validation, JSON, encoding, size, media type, headers", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const as = { token: adminToken };
    expectReason(await t.request("POST", "/api/v1/users", { ...as, body: {} }), 400, "validation_failed");
    expectReason(await t.request("POST", "/api/v1/users", { ...as, rawBody: "{" }), 400, "invalid_json");
    const notUtf8 = await t.fetch("/api/v1/policies", {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    });
    expect(((await notUtf8.json()) as { reason: string }).reason).toBe("body_not_utf8");
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    expectReason(await t.request("POST", "/api/v1/policies", { ...as, rawBody: big }), 413, "body_too_large");
    expectReason(
      await t.request("POST", "/api/v1/policies", {
        ...as,
        rawBody: "name=x",
        headers: { "content-type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    expectReason(
      await t.request("GET", "/api/v1/users/me", { ...as, headers: { "x-padding": "p".repeat(20_000) } }),
      431,
      "headers_too_large",
    );
    expectReason(await t.request("GET", "/api/v1/devices?page=0", as), 400, "validation_failed");
  });

  test("routing: unknown route, wrong method", async () => {
    const t = await newApp();
    expectReason(await t.request("GET", "/api/v1/nothing-here"), 404, "route_not_found");
    expectReason(await t.request("DELETE", "/api/v1/health"), 405, "method_not_allowed");
  });

  test("who is asking: no credential, a bad token, a missing scope, a device token elsewhere", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const member = await t.createUser(adminToken, "member");
    expectReason(await t.request("GET", "/api/v1/users"), 401, "authentication_required");
    expectReason(await t.request("GET", "/api/v1/users", { token: "not.a.jwt" }), 401, "token_invalid");
    expectReason(await t.request("GET", "/api/v1/users", { token: member.token }), 403, "scope_missing");
    expectReason(
      await t.request("POST", "/api/v1/agent/checkin", { token: adminToken, body: {} }),
      401,
      "device_token_required",
    );
    expectReason(
      await t.request("POST", "/api/v1/devices/enroll", {
        body: {
          enrollment_token: "nope",
          device_name: "x",
          platform: "linux",
          agent_version: "1",
          hardware_id: "x",
        },
      }),
      401,
      "enrollment_token_unknown",
    );
  });

  test("rules of the domain: not found, last admin, taken names, device states, document validation", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const as = { token: org.adminToken };
    expectReason(
      await t.request("GET", `/api/v1/devices/${crypto.randomUUID()}`, as),
      404,
      "device_not_found",
    );
    expectReason(await t.request("DELETE", `/api/v1/users/${org.adminId}`, as), 409, "last_admin");
    await t.request("POST", "/api/v1/policies", { ...as, body: { name: "Laptops" } });
    expectReason(
      await t.request("POST", "/api/v1/policies", { ...as, body: { name: "Laptops" } }),
      409,
      "policy_name_taken",
    );
    const device = await enrollDevice(t, org.adminToken);
    expectReason(await t.request("DELETE", `/api/v1/devices/${device.id}`, as), 409, "device_not_wiped");
    const invalid = await t.request("POST", "/api/v1/policies/validate", {
      ...as,
      body: { policy_data: { usb: { allowed_vendor_ids: ["not-a-usb-id"] } } },
    });
    expectReason(invalid, 400, "policy_invalid");
    expect(invalid.body.valid).toBe(false);
    expect(invalid.body.errors.length).toBeGreaterThan(0);
  });

  test("limits: the rate limit and the login throttle", async () => {
    const t = await newApp({ rate_limit: { authenticated_per_minute: 2 }, auth: { login_max_failures: 2 } });
    const org = await t.createOrganization();
    await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
    await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
    expectReason(await t.request("GET", "/api/v1/users/me", { token: org.adminToken }), 429, "rate_limited");
    const wrong = { body: { email: org.adminEmail, password: "wrong-password-123" } };
    expectReason(await t.request("POST", "/api/v1/auth/login", wrong), 401, "invalid_credentials");
    await t.request("POST", "/api/v1/auth/login", wrong);
    expectReason(await t.request("POST", "/api/v1/auth/login", wrong), 429, "login_throttled");
  });

  inProcessTest("failures of the service itself: the database gone", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    expectServerErrors(500, 503);
    t.close();
    expectReason(
      await t.request("GET", "/api/v1/users", { token: org.adminToken }),
      503,
      "database_unavailable",
    );
    // SQLite's closed handle is a failure of the server itself; PostgreSQL's closed pool is the
    // database gone, as every other request on it says.
    expectReason(
      await t.request("POST", "/api/v1/auth/login", {
        body: { email: org.adminEmail, password: "whatever-it-is" },
      }),
      ...((t.store === "sqlite" ? [500, "internal_error"] : [503, "database_unavailable"]) as [
        number,
        string,
      ]),
    );
  });
});

test("no source file but the error handler builds an error response", () => {
  const root = join(import.meta.dir, "../../src");
  const files = readdirSync(root, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith(".ts"));
  const offenders = files.filter((file) => {
    if (file.endsWith("error-handler.ts")) return false;
    const text = readFileSync(join(root, file), "utf8");
    // An error body is `code` and `message` written together, or a Response made with a 4xx/5xx status.
    return /\bcode:\s*\d{3}\b[\s\S]{0,80}\bmessage:/.test(text) || /status:\s*[45]\d\d\b/.test(text);
  });
  expect(offenders).toEqual([]);
});
