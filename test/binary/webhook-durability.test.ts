import { afterAll, expect, test } from "bun:test";
import { callServer as call, serversOnOneFolder } from "../helpers/binary";
import { startWebhookReceiver, verifyBothSignatures } from "../helpers/webhook-receiver";

const SECRET = "durability-secret-0123456";
const ADMIN = { email: "durable@example.com", password: "durability-password-1" };
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  BULWARK_WEBHOOKS_RETRY_SCHEDULE_SECONDS: "1,1,1,1,1,1,1,1,1,1",
  BULWARK_WEBHOOKS_TIMEOUT_SECONDS: "2",
};

const servers = serversOnOneFolder("bulwark-webhooks-", ENV);
let release: () => void = () => undefined;
const released = new Promise<void>((resolve) => {
  release = resolve;
});
// Down for the first run: it takes each delivery and never answers.
const receiver = startWebhookReceiver(async () => {
  await released;
  return new Response("too late");
});

afterAll(() => {
  release();
  receiver.stop();
});

async function waitUntil(condition: () => boolean, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (!condition() && Date.now() < deadline) await Bun.sleep(50);
  return condition();
}

test("events pending when the process is killed with SIGKILL are all delivered after a restart", async () => {
  const first = await servers.start();
  const { token } = await call<{ token: string }>(first, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const webhook = await call<{ id: string }>(first, "POST", "/api/v1/webhooks", token, {
    url: receiver.url,
    events: ["*"],
    secret: SECRET,
  });

  // Each committed before its response: a mix of policy events and webhook.test events.
  const produced: { kind: "event" | "policy"; id: string }[] = [];
  for (let index = 0; index < 3; index++) {
    const policy = await call<{ id: string }>(first, "POST", "/api/v1/policies", token, {
      name: `Policy ${index}`,
    });
    produced.push({ kind: "policy", id: policy.id });
    const sent = await call<{ event_id: string }>(
      first,
      "POST",
      `/api/v1/webhooks/${webhook.id}/test`,
      token,
    );
    produced.push({ kind: "event", id: sent.event_id });
  }
  // The first delivery is in flight (the receiver holds it) when the process dies.
  expect(await waitUntil(() => receiver.received.length > 0, 10)).toBe(true);
  await first.stop("SIGKILL");

  receiver.respondWith(() => new Response("ok"));
  const second = await servers.start();

  const eventIdOf = (item: { kind: "event" | "policy"; id: string }) =>
    item.kind === "event"
      ? item.id
      : receiver.received.find(
          (request) =>
            request.payload.event === "policy.created" && request.payload.data.policy_id === item.id,
        )?.payload.id;
  const isDelivered = () =>
    produced.every((item) => {
      const eventId = eventIdOf(item);
      return eventId !== undefined && receiver.received.some((request) => request.payload.id === eventId);
    });
  expect(await waitUntil(isDelivered, 25)).toBe(true);

  // None lost, in event order, and every copy of one event carries the same delivery id.
  const firstSeen = [...new Set(receiver.received.map((request) => request.payload.id))];
  expect(firstSeen).toEqual(produced.map((item) => eventIdOf(item) ?? "missing"));
  for (const eventId of firstSeen) {
    const copies = receiver.received.filter((request) => request.payload.id === eventId);
    const deliveryIds = new Set(copies.map((request) => request.headers["x-service-delivery"]));
    const webhookIds = new Set(copies.map((request) => request.headers["webhook-id"]));
    expect(deliveryIds.size).toBe(1);
    expect([...webhookIds]).toEqual([...deliveryIds]);
  }
  // The delivery cut off by the kill was sent again after the restart.
  const interrupted = receiver.received[0];
  const interruptedCopies = receiver.received.filter(
    (request) => request.payload.id === interrupted?.payload.id,
  );
  expect(interruptedCopies.length).toBeGreaterThanOrEqual(2);
  for (const request of receiver.received) expect(await verifyBothSignatures(request, SECRET)).toBe(true);

  expect(await second.stop("SIGTERM")).toBe(0);
}, 90_000);
