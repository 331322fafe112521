import { afterAll, expect, test } from "bun:test";
import { enrollDevice } from "../helpers/devices";
import { createTestApp } from "../helpers/test-app";

const example = await createTestApp();
const configured = await createTestApp({ vpn: { endpoint: "[2001:db8::7]:51820", dns: ["10.100.0.1"] } });
afterAll(() => {
  example.close();
  configured.close();
});

test("GET /vpn/settings says when the endpoint is still the example, and what devices receive otherwise", async () => {
  const org = await example.createOrganization();
  const settings = await example.request("GET", "/api/v1/vpn/settings", { token: org.adminToken });
  expect(settings.status).toBe(200);
  expect(settings.body).toMatchObject({
    endpoint: "vpn.example.com:51820",
    endpoint_is_example: true,
    key_managed_by: "bulwark",
    address_pool: "10.100.0.0/16",
  });

  const other = await configured.createOrganization();
  const auditor = await configured.createUser(other.adminToken, "auditor");
  const real = await configured.request("GET", "/api/v1/vpn/settings", { token: auditor.token });
  expect(real.status).toBe(200);
  expect(real.body).toMatchObject({
    endpoint: "[2001:db8::7]:51820",
    endpoint_is_example: false,
    dns: ["10.100.0.1"],
  });
  // What an enrolled device gets is what the settings say.
  const device = await enrollDevice(configured, other.adminToken);
  expect(device.vpn_config).toMatchObject({
    endpoint: real.body.endpoint,
    server_public_key: real.body.server_public_key,
    dns: real.body.dns,
    persistent_keepalive: real.body.persistent_keepalive,
  });
  // Its address comes from its organization's block, which its tunnel routes.
  expect(real.body.organization_subnet).toMatch(/^10\.100\.\d+\.0\/\d+$/);
  expect(device.vpn_config.allowed_ips).toContain(real.body.organization_subnet);
  const member = await configured.createUser(other.adminToken, "member");
  expect((await configured.request("GET", "/api/v1/vpn/settings", { token: member.token })).status).toBe(403);
});
