import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Config } from "../../src/config/config-schema";
import type { DeepPartial } from "../../src/config/load-config";
import { withTransaction } from "../../src/db/client";
import { webhookDeliveries, webhooks } from "../../src/db/tables";
import type { EventType } from "../../src/domain/events/event-types";
import { recordEvent } from "../../src/domain/events/record-event";
import { claimDelivery } from "../../src/domain/webhooks/claim-delivery";
import { JOBS } from "../../src/jobs/jobs";
import { createWebhookDispatcher, type WebhookDispatcherOptions } from "../../src/jobs/webhook-dispatcher";
import { toIso } from "../../src/lib/clock";
import { newId } from "../../src/lib/ids";
import { createTestApp } from "../helpers/test-app";
import {
  startWebhookReceiver,
  verifyBothSignatures,
  type WebhookReceiver,
} from "../helpers/webhook-receiver";

const SECRET = "dispatcher-test-secret-0123";

/** A delivery as GET /webhooks/:id/deliveries lists it. */
interface Delivery {
  id: string;
  event_id: string;
  event: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  completed_at: string | null;
  attempts_log: { attempt: number; status_code: number | null; error: string | null }[];
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function receiver(...args: Parameters<typeof startWebhookReceiver>): WebhookReceiver {
  const started = startWebhookReceiver(...args);
  cleanups.push(started.stop);
  return started;
}

/** A fresh app whose fake clock reads real time (standardwebhooks checks timestamps against it). */
async function setup(
  webhookConfig: DeepPartial<Config["webhooks"]> = {},
  dispatcherOptions: WebhookDispatcherOptions = {},
) {
  const t = await createTestApp({
    webhooks: {
      allow_private_targets: true,
      retry_schedule_seconds: [5, 20],
      timeout_seconds: 2,
      ...webhookConfig,
    },
  });
  cleanups.push(t.close);
  t.clock.set(new Date());
  const org = await t.createOrganization();
  const dispatcher = createWebhookDispatcher(t.deps, dispatcherOptions);

  async function subscribe(url: string, events: string[] = ["*"], secret = SECRET): Promise<string> {
    const response = await t.request("POST", "/api/v1/webhooks", {
      token: org.adminToken,
      body: { url, events, secret },
    });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  /** Records an event the way the policy and device code does, in its own transaction. */
  async function record(type: EventType, data: Record<string, unknown> = {}) {
    return await withTransaction(
      t.deps.db,
      async (tx) => await recordEvent(tx, t.clock.now(), org.organizationId, type, data as never),
    );
  }

  let token = org.adminToken;
  /** Signs in again, for tests that move the clock past the access token's lifetime. */
  async function renewSession(): Promise<void> {
    token = (await t.signIn(org.adminEmail)).token;
  }

  async function deliveries(webhookId: string): Promise<Delivery[]> {
    const response = await t.request<{ data: Delivery[] }>(
      "GET",
      `/api/v1/webhooks/${webhookId}/deliveries?page_size=100`,
      {
        token,
      },
    );
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** The subscription's newest delivery. */
  async function latestDelivery(webhookId: string): Promise<Delivery> {
    const [delivery] = await deliveries(webhookId);
    if (!delivery) throw new Error(`webhook ${webhookId} has no delivery`);
    return delivery;
  }

  async function webhook(webhookId: string) {
    return (await t.request("GET", `/api/v1/webhooks/${webhookId}`, { token: org.adminToken })).body;
  }

  /** Runs the dispatcher until nothing due is left (bounded). */
  async function drain(): Promise<number> {
    let total = 0;
    for (let round = 0; round < 20; round++) {
      const attempts = await dispatcher.runOnce();
      if (attempts === 0) break;
      total += attempts;
    }
    return total;
  }

  return { t, org, dispatcher, subscribe, record, deliveries, latestDelivery, webhook, drain, renewSession };
}

const device = {
  device_id: "4f1c2d3e-0000-4000-8000-000000000001",
  device_name: "Zoë's laptop",
  platform: "macos",
};

describe("delivery", () => {
  test("posts {id, event, timestamp, data} with headers both independent verifiers accept", async () => {
    const { subscribe, record, dispatcher, latestDelivery } = await setup();
    const sink = receiver();
    const webhookId = await subscribe(sink.url);
    const event = await record("device.enrolled", device);

    expect(await dispatcher.runOnce()).toBe(1);

    expect(sink.received).toHaveLength(1);
    const [request] = sink.received;
    if (!request) throw new Error("nothing received");
    expect(request.payload).toEqual({
      id: event.id,
      event: "device.enrolled",
      timestamp: event.createdAt,
      data: device,
    });
    const delivery = await latestDelivery(webhookId);
    expect(request.headers["x-service-event"]).toBe("device.enrolled");
    expect(request.headers["x-service-delivery"]).toBe(delivery.id);
    expect(request.headers["webhook-id"]).toBe(delivery.id);
    expect(request.headers["content-type"]).toStartWith("application/json");
    expect(await verifyBothSignatures(request, SECRET)).toBe(true);
    expect(await verifyBothSignatures(request, "another-secret-of-some-length")).toBe(false);
    expect(
      await verifyBothSignatures({ ...request, body: request.body.replace("macos", "linux") }, SECRET),
    ).toBe(false);

    expect(delivery).toMatchObject({
      event_id: event.id,
      event: "device.enrolled",
      status: "succeeded",
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
    });
    expect(delivery.completed_at).not.toBeNull();
    expect(delivery.attempts_log).toHaveLength(1);
    expect(delivery.attempts_log[0]).toMatchObject({ attempt: 1, status_code: 200, error: null });
  });

  test("a webhook.test event from the API reaches only that subscription, even outside its filter", async () => {
    const { t, org, subscribe, dispatcher } = await setup();
    const tested = receiver();
    const bystander = receiver();
    const testedId = await subscribe(tested.url, ["policy.updated"]);
    await subscribe(bystander.url, ["*"]);

    const response = await t.request("POST", `/api/v1/webhooks/${testedId}/test`, { token: org.adminToken });
    expect(response.status).toBe(202);
    await dispatcher.runOnce();

    expect(bystander.received).toHaveLength(0);
    expect(tested.received).toHaveLength(1);
    const [request] = tested.received;
    if (!request) throw new Error("nothing received");
    expect(request.payload.id).toBe(response.body.event_id);
    expect(request.payload.event).toBe("webhook.test");
    expect(request.payload.data.webhook_id).toBe(testedId);
    expect(request.headers["x-service-delivery"]).toBe(response.body.delivery_id);
    expect(await verifyBothSignatures(request, SECRET)).toBe(true);
  });

  test("a subscription receives only the events it names; * receives all, in order", async () => {
    const { subscribe, record, drain } = await setup();
    const policiesOnly = receiver();
    const everything = receiver();
    const deviceLifecycle = receiver();
    await subscribe(policiesOnly.url, ["policy.updated"]);
    await subscribe(everything.url, ["*"]);
    await subscribe(deviceLifecycle.url, ["device.enrolled", "device.wiped"]);

    await record("device.enrolled", device);
    await record("policy.updated", { policy_id: "p", version: 2 });
    await record("device.wiped", device);
    await record("policy.created", { policy_id: "q" });
    await drain();

    const events = (sink: WebhookReceiver) => sink.received.map((request) => request.payload.event);
    expect(events(policiesOnly)).toEqual(["policy.updated"]);
    expect(events(everything)).toEqual([
      "device.enrolled",
      "policy.updated",
      "device.wiped",
      "policy.created",
    ]);
    expect(events(deviceLifecycle)).toEqual(["device.enrolled", "device.wiped"]);
  });

  test("events go to the subscriptions that were active when the event was recorded", async () => {
    const { t, org, subscribe, record, drain } = await setup();
    const sink = receiver();
    await record("policy.created", { policy_id: "before subscribing" });
    const webhookId = await subscribe(sink.url);
    const delivered = await record("policy.created", { policy_id: "while active" });
    await t.request("PATCH", `/api/v1/webhooks/${webhookId}`, {
      token: org.adminToken,
      body: { active: false },
    });
    await record("policy.created", { policy_id: "while inactive" });
    await t.request("PATCH", `/api/v1/webhooks/${webhookId}`, {
      token: org.adminToken,
      body: { active: true },
    });
    await drain();

    expect(sink.received.map((request) => request.payload.id)).toEqual([delivered.id]);
  });

  test("a redirect is not followed and counts as a failed attempt", async () => {
    const { subscribe, record, dispatcher, latestDelivery } = await setup();
    const elsewhere = receiver();
    const redirecting = receiver(
      () => new Response(null, { status: 307, headers: { location: elsewhere.url } }),
    );
    const webhookId = await subscribe(redirecting.url);
    await record("policy.created", {});

    await dispatcher.runOnce();

    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    const delivery = await latestDelivery(webhookId);
    expect(delivery.status).toBe("pending");
    expect(delivery.last_status_code).toBe(307);
    expect(delivery.last_error).toContain("redirect");
  });
});

describe("retries", () => {
  test("a failing receiver is retried on the schedule with the same delivery id until it succeeds", async () => {
    const { t, subscribe, record, dispatcher, latestDelivery } = await setup({
      retry_schedule_seconds: [5, 20],
    });
    const sink = receiver((_request, index) => new Response("busy", { status: index < 2 ? 500 : 200 }));
    const webhookId = await subscribe(sink.url);
    await record("device.wiped", device);

    expect(await dispatcher.runOnce()).toBe(1);
    let delivery = await latestDelivery(webhookId);
    expect(delivery).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status_code: 500,
      last_error: "receiver answered 500",
    });
    // The first retry waits 5 s plus at most 10% jitter.
    const firstFailure = t.clock.now().getTime();
    const firstRetryAt = new Date(delivery.next_attempt_at ?? 0).getTime();
    expect(firstRetryAt).toBeGreaterThanOrEqual(firstFailure + 5000);
    expect(firstRetryAt).toBeLessThanOrEqual(firstFailure + 5500);

    t.clock.advanceSeconds(4.9);
    expect(await dispatcher.runOnce()).toBe(0);
    t.clock.advanceSeconds(0.7);
    expect(await dispatcher.runOnce()).toBe(1);
    delivery = await latestDelivery(webhookId);
    expect(delivery).toMatchObject({ status: "pending", attempts: 2 });
    const secondFailure = t.clock.now().getTime();
    const secondRetryAt = new Date(delivery.next_attempt_at ?? 0).getTime();
    expect(secondRetryAt).toBeGreaterThanOrEqual(secondFailure + 20_000);
    expect(secondRetryAt).toBeLessThanOrEqual(secondFailure + 22_000);

    t.clock.advanceSeconds(19.9);
    expect(await dispatcher.runOnce()).toBe(0);
    t.clock.advanceSeconds(2.2);
    expect(await dispatcher.runOnce()).toBe(1);

    delivery = await latestDelivery(webhookId);
    expect(delivery).toMatchObject({
      status: "succeeded",
      attempts: 3,
      last_status_code: 200,
      next_attempt_at: null,
    });
    expect(delivery?.attempts_log.map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(sink.received).toHaveLength(3);
    for (const request of sink.received) {
      expect(request.headers["x-service-delivery"]).toBe(delivery.id);
      expect(request.headers["webhook-id"]).toBe(delivery.id);
      expect(request.body).toBe(sink.received[0]?.body ?? "");
      expect(await verifyBothSignatures(request, SECRET)).toBe(true);
    }
  });

  test("after the last retry the delivery is failed and no longer attempted", async () => {
    const { t, org, subscribe, record, drain, webhook, latestDelivery } = await setup({
      retry_schedule_seconds: [5, 20],
    });
    const sink = receiver(() => new Response("down", { status: 503 }));
    const webhookId = await subscribe(sink.url);
    await record("device.enrolled", device);

    await drain();
    t.clock.advanceSeconds(6);
    await drain();
    t.clock.advanceSeconds(23);
    await drain();
    t.clock.advanceSeconds(3600);
    await drain();

    expect(sink.received).toHaveLength(3);
    const delivery = await latestDelivery(webhookId);
    expect(delivery).toMatchObject({
      status: "failed",
      attempts: 3,
      last_status_code: 503,
      next_attempt_at: null,
    });
    expect(delivery.completed_at).not.toBeNull();
    // A failed delivery does not disable the subscription; its listing shows how the last one went.
    const current = await webhook(webhookId);
    expect(current.active).toBe(true);
    expect(current.last_delivery).toMatchObject({ status: "failed", status_code: 503 });
    const listed = await t.request("GET", "/api/v1/webhooks", { token: org.adminToken });
    expect(listed.body.data[0].last_delivery).toMatchObject({ status: "failed", status_code: 503 });
  });

  test("a receiver that hangs past the timeout fails the attempt and holds back no other subscription", async () => {
    const { t, subscribe, record, dispatcher, deliveries } = await setup({ timeout_seconds: 1 });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(() => release());
    const hanging = receiver(async () => {
      await released;
      return new Response("too late");
    });
    const hangingId = await subscribe(hanging.url);
    const slowAttemptsSeenByFastReceiver: number[] = [];
    const fast = receiver(async () => {
      const slow = await t.deps.db
        .select({ attempts: webhookDeliveries.attempts })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.webhookId, hangingId));
      slowAttemptsSeenByFastReceiver.push(...slow.map((row) => row.attempts));
      return new Response("ok");
    });
    await subscribe(fast.url);
    await record("device.enrolled", device);
    await record("policy.updated", {});
    await record("device.wiped", device);

    // One timed-out attempt for the hanging receiver, three deliveries to the fast one meanwhile.
    expect(await dispatcher.runOnce()).toBe(4);

    expect(fast.received).toHaveLength(3);
    // Every delivery to the fast receiver happened before the hanging attempt was over.
    expect(slowAttemptsSeenByFastReceiver.every((attempts) => attempts === 0)).toBe(true);
    const hangingDeliveries = await deliveries(hangingId);
    const oldest = hangingDeliveries.at(-1);
    expect(oldest).toMatchObject({
      status: "pending",
      attempts: 1,
      last_status_code: null,
      last_error: "timed out after 1 s",
    });
    // The later events wait behind the first one.
    expect(hangingDeliveries.slice(0, 2).map((delivery) => delivery.attempts)).toEqual([0, 0]);
  });

  test("one subscription's deliveries go out in event order, a retried one holding back the rest", async () => {
    const { t, subscribe, record, dispatcher, drain } = await setup();
    const sink = receiver((_request, index) => new Response(null, { status: index === 0 ? 500 : 204 }));
    await subscribe(sink.url);
    const first = await record("policy.created", {});
    const second = await record("policy.updated", {});
    const third = await record("policy.deleted", {});

    expect(await dispatcher.runOnce()).toBe(1);
    t.clock.advanceSeconds(6);
    await drain();

    expect(sink.received.map((request) => request.payload.id)).toEqual([
      first.id,
      first.id,
      second.id,
      third.id,
    ]);
  });
});

describe("410 Gone", () => {
  test("disables the subscription, keeps its later deliveries waiting, and re-enabling resumes them", async () => {
    const { t, org, subscribe, record, drain, deliveries, webhook } = await setup();
    const sink = receiver(() => new Response("gone", { status: 410 }));
    const webhookId = await subscribe(sink.url);
    await record("device.enrolled", device);
    const waiting = await record("device.wiped", device);

    await drain();
    expect(sink.received).toHaveLength(1);
    const disabled = await webhook(webhookId);
    expect(disabled.active).toBe(false);
    expect(disabled.disabled_reason).toBe("receiver answered 410 Gone");
    let [second, first] = await deliveries(webhookId);
    expect(first).toMatchObject({ status: "failed", attempts: 1, last_status_code: 410 });
    expect(second).toMatchObject({ status: "pending", attempts: 0 });

    const audit = await t.request("GET", "/api/v1/audit-logs?action=webhook.disable", {
      token: org.adminToken,
    });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      actor: { type: "system" },
      target: { type: "webhook", id: webhookId },
    });

    // Disabled: new events are not fanned out to it and nothing is sent, however long we wait.
    await record("policy.updated", {});
    t.clock.advanceSeconds(120);
    await drain();
    expect(sink.received).toHaveLength(1);

    sink.respondWith(() => new Response("welcome back"));
    const enabled = await t.request("PATCH", `/api/v1/webhooks/${webhookId}`, {
      token: org.adminToken,
      body: { active: true },
    });
    expect(enabled.body).toMatchObject({ active: true, disabled_reason: null });
    await drain();
    expect(sink.received.map((request) => request.payload.id).slice(1)).toEqual([waiting.id]);
    [second, first] = await deliveries(webhookId);
    expect(second?.status).toBe("succeeded");
    expect(await deliveries(webhookId)).toHaveLength(2);
  });
});

describe("target checks at send time", () => {
  test("a hostname that now resolves to loopback is refused without any request", async () => {
    const sent: string[] = [];
    const { t, org, record, dispatcher, latestDelivery } = await setup(
      { allow_private_targets: false },
      {
        lookup: async () => ["127.0.0.1"],
        send: async (url) => {
          sent.push(url.toString());
          return new Response("ok");
        },
      },
    );
    // Saved while the name resolved to a public address (DNS rebinding).
    const webhookId = newId();
    const now = toIso(t.clock.now());
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await tx.insert(webhooks).values({
          id: webhookId,
          organizationId: org.organizationId,
          url: "http://rebinding.example/hook",
          events: ["*"],
          secret: SECRET,
          createdAt: now,
          updatedAt: now,
        }),
    );
    await record("policy.created", {});

    expect(await dispatcher.runOnce()).toBe(1);

    expect(sent).toEqual([]);
    const delivery = await latestDelivery(webhookId);
    expect(delivery.status).toBe("pending");
    expect(delivery.last_error).toContain("target refused");
    expect(delivery.last_error).toContain("127.0.0.1 is loopback");
  });
});

describe("crash safety", () => {
  test("a delivery claimed by an attempt that never finished is retried with the same id after its lease", async () => {
    const { t, subscribe, record, dispatcher, latestDelivery } = await setup({ timeout_seconds: 2 });
    const sink = receiver();
    const webhookId = await subscribe(sink.url);
    await record("device.enrolled", device);
    const pending = await latestDelivery(webhookId);
    // A process claims the delivery and dies before recording the outcome.
    const claimed = await claimDelivery(t.deps, webhookId, 0, 2 + 5);
    expect(claimed?.id).toBe(pending.id);

    expect(await dispatcher.runOnce()).toBe(0);
    t.clock.advanceSeconds(8);
    expect(await dispatcher.runOnce()).toBe(1);

    expect(sink.received.map((request) => request.headers["x-service-delivery"])).toEqual([pending.id]);
    const delivery = await latestDelivery(webhookId);
    expect(delivery).toMatchObject({ id: pending.id, status: "succeeded", attempts: 1 });
  });

  test("start() keeps delivering in the background and stop() waits for the attempt in flight", async () => {
    const { subscribe, record, dispatcher, latestDelivery } = await setup();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sink = receiver(async () => {
      await released;
      return new Response("ok");
    });
    const webhookId = await subscribe(sink.url);
    await record("device.enrolled", device);

    dispatcher.start();
    for (let tries = 0; tries < 100 && sink.received.length === 0; tries++) await Bun.sleep(20);
    expect(sink.received).toHaveLength(1);
    const stopped = dispatcher.stop();
    release();
    await stopped;

    const delivery = await latestDelivery(webhookId);
    expect(delivery.status).toBe("succeeded");
  });
});

describe("retention", () => {
  test("the purge job deletes finished deliveries past webhooks.retention_days and keeps pending ones", async () => {
    const { t, subscribe, record, drain, deliveries, renewSession } = await setup({ retention_days: 1 });
    const purge = JOBS.find((job) => job.id === "purge-webhook-deliveries");
    if (!purge) throw new Error("purge job missing");
    const sink = receiver();
    const webhookId = await subscribe(sink.url);
    await record("policy.created", {});
    await drain();
    sink.respondWith(() => new Response("down", { status: 500 }));
    await record("policy.updated", {});
    await drain();
    expect((await deliveries(webhookId)).map((delivery) => delivery.status)).toEqual([
      "pending",
      "succeeded",
    ]);

    t.clock.advanceSeconds(86400 - 60);
    await purge.run(t.deps);
    await renewSession();
    expect(await deliveries(webhookId)).toHaveLength(2);

    t.clock.advanceSeconds(120);
    await purge.run(t.deps);
    const remaining = await deliveries(webhookId);
    expect(remaining.map((delivery) => [delivery.event, delivery.status])).toEqual([
      ["policy.updated", "pending"],
    ]);
  });
});

describe("fairness between organizations", () => {
  test("one organization's backlog of slow receivers cannot take every slot", async () => {
    // Four slots: each organization may hold one at a time.
    const { t, subscribe, record } = await setup({}, { concurrency: 4 });
    const slowSink = receiver(async () => {
      await Bun.sleep(300);
      return new Response("ok");
    });
    // More than four times the slots, so over-fetching candidates alone would not reach the other tenant.
    for (let index = 0; index < 20; index++) await subscribe(slowSink.url);
    await record("policy.created", {});

    const other = await t.createOrganization();
    const fastSink = receiver();
    const created = await t.request("POST", "/api/v1/webhooks", {
      token: other.adminToken,
      body: { url: fastSink.url, events: ["*"], secret: SECRET },
    });
    expect(created.status).toBe(201);
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await recordEvent(tx, t.clock.now(), other.organizationId, "policy.created", {
          policy_id: crypto.randomUUID(),
          name: "Theirs",
          version: 1,
        }),
    );

    const dispatcher = createWebhookDispatcher(t.deps, { concurrency: 4 });
    expect(await dispatcher.runOnce()).toBe(2);
    expect(fastSink.received).toHaveLength(1);
    expect(slowSink.received).toHaveLength(1);
  });
});
