import { afterAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { EVENT_DATA_SCHEMAS } from "../../src/domain/events/event-payloads";
import { EVENT_TYPES } from "../../src/domain/events/event-types";
import { createTestApp, type TestResponse } from "../helpers/test-app";
import { deliverWebhooks, startWebhookReceiver, verifyBothSignatures } from "../helpers/webhook-receiver";

const SECRET = "api-events-secret-0123456";

const t = await createTestApp({
  webhooks: { allow_private_targets: true },
  rate_limit: { unauthenticated_per_minute: 10_000 },
});
// standardwebhooks checks webhook-timestamp against real time.
if (t.target === "in-process") t.clock.set(new Date());
const receiver = startWebhookReceiver();
afterAll(() => {
  receiver.stop();
  t.close();
});

async function expectStatus(response: Promise<TestResponse>, status: number) {
  const settled = await response;
  if (settled.status !== status) {
    throw new Error(`expected ${status}, got ${settled.status}: ${JSON.stringify(settled.body)}`);
  }
  return settled.body;
}

test("events of real API calls (policy updated, device enrolled, device wiped) arrive signed", async () => {
  const org = await t.createOrganization();
  const token = org.adminToken;
  await expectStatus(
    t.request("POST", "/api/v1/webhooks", {
      token,
      body: {
        url: receiver.url,
        events: ["policy.updated", "device.enrolled", "device.wiped"],
        secret: SECRET,
      },
    }),
    201,
  );

  const policy = await expectStatus(
    t.request("POST", "/api/v1/policies", { token, body: { name: "Engineering laptops" } }),
    201,
  );
  await expectStatus(
    t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token,
      body: { description: "Screenshots off", policy_data: { dlp: { screenshot_allowed: false } } },
    }),
    200,
  );
  const enrollmentToken = await expectStatus(
    t.request("POST", "/api/v1/enrollment-tokens", { token, body: {} }),
    201,
  );
  const device = await expectStatus(
    t.request("POST", "/api/v1/devices/enroll", {
      body: {
        enrollment_token: enrollmentToken.token,
        device_name: "Build agent 7",
        platform: "linux",
        agent_version: "1.4.0",
        hardware_id: `HW-${crypto.randomUUID()}`,
      },
    }),
    201,
  );
  const wipe = await expectStatus(
    t.request("POST", `/api/v1/devices/${device.id}/wipe`, { token, body: { reason: "stolen" } }),
    202,
  );
  await expectStatus(
    t.request("POST", `/api/v1/agent/wipes/${wipe.wipe_id}/complete`, {
      token: device.device_token,
      body: { success: true },
    }),
    200,
  );

  await deliverWebhooks(t, receiver, 3);

  // policy.created and device.wipe_requested are not in the filter.
  expect(receiver.received.map((request) => request.payload.event)).toEqual([
    "policy.updated",
    "device.enrolled",
    "device.wiped",
  ]);
  for (const request of receiver.received) {
    expect(await verifyBothSignatures(request, SECRET)).toBe(true);
    expect(request.headers["x-service-event"]).toBe(request.payload.event);
  }
  // Each payload is what the OpenAPI document's webhooks section says it is.
  const document = (await t.request("GET", "/api/v1/openapi.json")).body;
  for (const { payload } of receiver.received) {
    const type = payload.event as keyof typeof EVENT_DATA_SCHEMAS;
    expect(
      document.webhooks[type].post.requestBody.content["application/json"].schema.properties.event.const,
    ).toBe(type);
    expect([...Value.Errors(EVENT_DATA_SCHEMAS[type], payload.data)].map((error) => error.path)).toEqual([]);
  }
  expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
  const [updated, enrolled, wiped] = receiver.received.map((request) => request.payload);
  expect(updated?.data).toMatchObject({ policy_id: policy.id, version: 2 });
  const deviceData = { device_id: device.id, device_name: "Build agent 7", platform: "linux" };
  expect(enrolled?.data).toMatchObject(deviceData);
  expect(wiped?.data).toMatchObject(deviceData);
});
