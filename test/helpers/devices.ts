import { asc, eq } from "drizzle-orm";
import { events } from "../../src/db/tables";
import type { PolicyData } from "../../src/domain/policies/policy-document";
import { createTestApp, type TestApp } from "./test-app";

/** A test app whose per-IP limit does not get in the way of many unauthenticated enrollments. */
export function createDeviceTestApp(overrides: Parameters<typeof createTestApp>[0] = {}) {
  return createTestApp({ ...overrides, rate_limit: { unauthenticated_per_minute: 100_000 } });
}

/** Creates an enrollment token through the API and returns the response body. */
export async function createEnrollmentToken(
  t: TestApp,
  adminToken: string,
  body: Record<string, unknown> = {},
) {
  const response = await t.request("POST", "/api/v1/enrollment-tokens", { token: adminToken, body });
  if (response.status !== 201)
    throw new Error(`creating enrollment token failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; token: string };
}

let hardwareCounter = 0;

/** A valid enrollment body; `overrides` replace fields (undefined removes one). */
export function enrollBody(enrollmentToken: string, overrides: Record<string, unknown> = {}) {
  const body: Record<string, unknown> = {
    enrollment_token: enrollmentToken,
    device_name: `Laptop ${++hardwareCounter}`,
    platform: "macos",
    agent_version: "1.4.0",
    hardware_id: `HW-${crypto.randomUUID()}`,
    os_version: "14.4",
    ...overrides,
  };
  for (const [key, value] of Object.entries(body)) if (value === undefined) delete body[key];
  return body;
}

/** The enrollment result of POST /devices/enroll. */
export interface Enrolled {
  id: string;
  device_name: string;
  platform: string;
  status: string;
  vpn_config: {
    endpoint: string;
    public_key: string;
    private_key?: string;
    address: string;
    server_public_key: string;
    allowed_ips: string[];
    dns: string[];
    persistent_keepalive: number;
    wg_quick: string;
  };
  policy: { id: string; name: string; version: number };
  device_token: string;
  device_token_expires_at: string;
  device_certificate?: string;
  certificate_expires_at?: string;
}

/** Enrolls one device with a fresh single-use token of the admin's organization. */
export async function enrollDevice(
  t: TestApp,
  adminToken: string,
  overrides: Record<string, unknown> = {},
  tokenBody: Record<string, unknown> = {},
): Promise<Enrolled> {
  const { token } = await createEnrollmentToken(t, adminToken, tokenBody);
  const response = await t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(token, overrides) });
  if (response.status !== 201)
    throw new Error(`enrollment failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as Enrolled;
}

/** Wipes a device as it happens in the field: an admin asks for it (202) and the agent reports it done (200). */
export async function wipeDevice(
  t: TestApp,
  adminToken: string,
  device: { id: string; device_token: string },
  reason = "lost",
): Promise<void> {
  const wipe = await t.request("POST", `/api/v1/devices/${device.id}/wipe`, {
    token: adminToken,
    body: { reason },
  });
  if (wipe.status !== 202) throw new Error(`wipe failed: ${wipe.status} ${JSON.stringify(wipe.body)}`);
  const done = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
    token: device.device_token,
    body: { success: true },
  });
  if (done.status !== 200)
    throw new Error(`wipe completion failed: ${done.status} ${JSON.stringify(done.body)}`);
}

/** An agent check-in with the device token. */
export function checkIn(t: TestApp, deviceToken: string, body: Record<string, unknown> = {}) {
  return t.request("POST", "/api/v1/agent/checkin", { token: deviceToken, body });
}

/** Facts that satisfy every policy. */
export const HEALTHY_FACTS = {
  disk_encrypted: true,
  vpn_connected: true,
  screen_lock_enabled: true,
  firewall_enabled: true,
  usb_storage_blocked: true,
  usb_devices_blocked: true,
  screenshots_blocked: true,
};

/** Creates a policy in the organization of `adminToken` through the API; `changes` are merged over the defaults. */
export async function createTestPolicy(
  t: TestApp,
  adminToken: string,
  name: string,
  changes: Partial<PolicyData> = {},
): Promise<{ id: string; name: string; version: number }> {
  const response = await t.request("POST", "/api/v1/policies", {
    token: adminToken,
    body: { name, policy_data: changes },
  });
  if (response.status !== 201)
    throw new Error(`creating policy ${name} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** The outbox events of an organization, oldest first. */
export async function recordedEvents(t: TestApp, organizationId: string, type?: string) {
  return (
    await t.deps.db
      .select()
      .from(events)
      .where(eq(events.organizationId, organizationId))
      .orderBy(asc(events.sequence))
  ).filter((event) => type === undefined || event.type === type);
}
