import { afterAll, expect, test } from "bun:test";
import { createTestApp } from "../helpers/test-app";

const t = await createTestApp();
afterAll(() => t.close());

test("an admin signs in and reads their own profile", async () => {
  const org = await t.createOrganization();
  const me = await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
  expect(me.status).toBe(200);
  expect(me.body.email).toBe(org.adminEmail);
  expect(me.body.role).toBe("admin");
});
