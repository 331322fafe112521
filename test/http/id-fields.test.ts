/** A malformed id says which kind of id it must be, in every body and query that takes one. */
import { afterAll, expect, test } from "bun:test";
import { createDeviceTestApp, enrollDevice } from "../helpers/devices";

const t = await createDeviceTestApp();
afterAll(() => t.close());

test("a policy_id or user_id that is not an id is a 400 saying which id it must be, never a type-system phrase", async () => {
  const org = await t.createOrganization();
  const device = await enrollDevice(t, org.adminToken);
  const cases: [string, string, unknown, string, string][] = [
    [
      "PUT",
      `/api/v1/devices/${device.id}/policy`,
      { policy_id: "finance" },
      "policy_id",
      "must be a policy id (UUID) or null",
    ],
    [
      "POST",
      "/api/v1/devices/bulk",
      { device_ids: [device.id], action: "assign_policy", policy_id: 12 },
      "policy_id",
      "must be a policy id (UUID) or null",
    ],
    ["PUT", "/api/v1/policies/default", { policy_id: "finance" }, "policy_id", "must be a policy id (UUID)"],
    [
      "POST",
      "/api/v1/enrollment-tokens",
      { policy_id: "finance" },
      "policy_id",
      "must be a policy id (UUID)",
    ],
    ["POST", "/api/v1/enrollment-tokens", { user_id: "bob" }, "user_id", "must be a user id (UUID)"],
    [
      "PATCH",
      `/api/v1/devices/${device.id}`,
      { user_id: "bob" },
      "user_id",
      "must be a user id (UUID) or null",
    ],
    ["GET", "/api/v1/devices?user_id=bob", undefined, "user_id", "must be a user id (UUID)"],
  ];
  for (const [method, path, body, field, message] of cases) {
    const response = await t.request(method, path, { token: org.adminToken, body });
    expect({ path, status: response.status, error: response.body.errors?.[0] }).toMatchObject({
      path,
      status: 400,
      error: { field, message },
    });
    expect(response.body.details).not.toContain("union");
  }
});
