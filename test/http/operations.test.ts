/**
 * What an operator watches: Prometheus metrics (checked by promtool itself), the structured log, the
 * health check's jobs and outbox, and CORS for browser clients on other origins.
 */
import { describe, expect, test } from "bun:test";
import { JOBS } from "../../src/jobs/jobs";
import { runJobOnce } from "../../src/jobs/scheduler";
import { checkIn, createEnrollmentToken, enrollBody, HEALTHY_FACTS } from "../helpers/devices";
import { expectServerErrors } from "../helpers/server-errors";
import { freshTestApps, inProcessTest, TEST_PASSWORD, type TestApp } from "../helpers/test-app";
import { deliverWebhooks, startWebhookReceiver } from "../helpers/webhook-receiver";

const METRICS_TOKEN = "scrape-token-0123456789abcdef";
const newApp = freshTestApps({ webhooks: { allow_private_targets: true } });

async function scrape(t: TestApp, token = METRICS_TOKEN) {
  const response = await t.fetch("/metrics", { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

/**
 * Each server's scrape, as Prometheus scrapes each replica (one text in-process and for the
 * executable). Counters are added up across them (`total`); the gauges read from the database are the
 * same on each, and read from the first.
 */
async function scrapeEach(t: TestApp, token = METRICS_TOKEN): Promise<string[]> {
  const responses = await t.fetchEach("/metrics", { headers: { authorization: `Bearer ${token}` } });
  return Promise.all(
    responses.map(async (response) => {
      expect(response.status).toBe(200);
      return response.text();
    }),
  );
}

/** A counter's sample added up over every server's scrape. */
function total(texts: string[], name: string, labels: Record<string, string> = {}): number {
  return texts.reduce((sum, text) => sum + sample(text, name, labels), 0);
}

/** The value of one sample (`name{labels}`), 0 when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return 0;
}

/** promtool's own verdict on a scrape: its exit code and what it printed. */
function promtoolCheck(text: string) {
  const result = Bun.spawnSync(["promtool", "check", "metrics"], { stdin: new TextEncoder().encode(text) });
  return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}`.trim() };
}

/** A webhook subscription to device.enrolled at `url`. */
async function subscribe(t: TestApp, adminToken: string, url: string, secret = "metrics-test-secret-0123") {
  const webhook = await t.request("POST", "/api/v1/webhooks", {
    token: adminToken,
    body: { url, events: ["device.enrolled"], secret },
  });
  expect(webhook.status).toBe(201);
}

/** The log's JSON entries (every line must be one). */
function logEntries(t: TestApp): Record<string, unknown>[] {
  return t.logLines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`a log line is not a JSON object: ${line}`);
    }
  });
}

describe("GET /metrics", () => {
  test("is off unless metrics.enabled: 404 metrics_disabled, and it says how to turn it on", async () => {
    const t = await newApp();
    const response = await t.request("GET", "/metrics");
    expect(response.status).toBe(404);
    expect(response.body.reason).toBe("metrics_disabled");
    expect(response.body.details).toContain("metrics.enabled");
  });

  test("with metrics.token, a scrape without it or with another one is 401", async () => {
    const t = await newApp({ metrics: { enabled: true, token: METRICS_TOKEN } });
    const missing = await t.request("GET", "/metrics");
    expect(missing.status).toBe(401);
    expect(missing.body.reason).toBe("metrics_token_invalid");
    expect((await scrape(t, `${METRICS_TOKEN}x`)).status).toBe(401);
    // A user's valid access token is not the metrics token either.
    const org = await t.createOrganization();
    expect((await scrape(t, org.adminToken)).status).toBe(401);
    const scraped = await scrape(t);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toStartWith("text/plain");
  });

  test("passes promtool check metrics, and its counters move with requests, check-ins and deliveries", async () => {
    const t = await newApp({ metrics: { enabled: true, token: METRICS_TOKEN } });
    if (t.target === "in-process") t.clock.set(new Date());
    const receiver = startWebhookReceiver();
    try {
      const org = await t.createOrganization();
      await subscribe(t, org.adminToken, receiver.url);
      const before = await scrapeEach(t);

      const { token } = await createEnrollmentToken(t, org.adminToken);
      const enrolled = await t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(token) });
      expect(enrolled.status).toBe(201);
      const deviceId = enrolled.body.id as string;
      for (let read = 0; read < 3; read++)
        expect(
          (await t.request("GET", `/api/v1/devices/${deviceId}`, { token: org.adminToken })).status,
        ).toBe(200);
      const missing = await t.request("GET", `/api/v1/devices/${crypto.randomUUID()}`, {
        token: org.adminToken,
      });
      expect(missing.status).toBe(404);
      expect((await checkIn(t, enrolled.body.device_token, { facts: HEALTHY_FACTS })).status).toBe(200);
      await deliverWebhooks(t, receiver, 1);
      expect(receiver.received).toHaveLength(1);

      const texts = await scrapeEach(t);
      for (const text of texts) expect(promtoolCheck(text)).toEqual({ code: 0, output: "" });
      const after = { text: texts[0] as string };
      const delta = (name: string, labels: Record<string, string> = {}) =>
        total(texts, name, labels) - total(before, name, labels);
      // Routes are the templates, never the ids in the paths.
      const deviceRoute = { method: "GET", route: "/api/v1/devices/:id" };
      expect(delta("bulwark_http_requests_total", { ...deviceRoute, status: "200" })).toBe(3);
      expect(delta("bulwark_http_requests_total", { ...deviceRoute, status: "404" })).toBe(1);
      expect(delta("bulwark_http_request_duration_seconds_count", { ...deviceRoute, status: "200" })).toBe(3);
      expect(
        delta("bulwark_http_requests_total", {
          method: "POST",
          route: "/api/v1/devices/enroll",
          status: "201",
        }),
      ).toBe(1);
      for (const text of texts) expect(text).not.toContain(deviceId);
      expect(delta("bulwark_device_checkins_total")).toBe(1);
      expect(sample(after.text, "bulwark_devices", { status: "online" })).toBe(1);
      expect(sample(after.text, "bulwark_devices", { status: "pending", compliance: "unknown" })).toBe(0);
      expect(delta("bulwark_webhook_delivery_attempts_total", { outcome: "succeeded" })).toBe(1);
      expect(sample(after.text, "bulwark_webhook_deliveries_pending")).toBe(0);
      expect(sample(after.text, "bulwark_database_size_bytes", { file: "main" })).toBeGreaterThan(0);
      expect(sample(after.text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    } finally {
      receiver.stop();
    }
  });

  test("a refused delivery counts as retrying and leaves a backlog with an age; deliveries queued behind it are not due", async () => {
    const t = await newApp({ metrics: { enabled: true }, webhooks: { retry_schedule_seconds: [3600] } });
    if (t.target === "in-process") t.clock.set(new Date());
    const receiver = startWebhookReceiver(() => new Response("down", { status: 503 }));
    try {
      const org = await t.createOrganization();
      await subscribe(t, org.adminToken, receiver.url);
      for (let device = 0; device < 2; device++) {
        const { token } = await createEnrollmentToken(t, org.adminToken);
        const enrolled = await t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(token) });
        expect(enrolled.status).toBe(201);
      }
      await deliverWebhooks(t, receiver, 1);
      // The second event waits behind the first, which waits an hour for its retry.
      expect(receiver.received).toHaveLength(1);
      if (t.target === "in-process") t.clock.advanceSeconds(90);
      else await Bun.sleep(1100);

      const texts = await scrapeEach(t);
      const scraped = texts[0] as string;
      expect(total(texts, "bulwark_webhook_delivery_attempts_total", { outcome: "retrying" })).toBe(1);
      expect(sample(scraped, "bulwark_webhook_deliveries_pending")).toBe(2);
      // Nothing the dispatcher could send now: the backlog grows old, the due wait stays 0.
      expect(sample(scraped, "bulwark_webhook_deliveries_due")).toBe(0);
      expect(sample(scraped, "bulwark_webhook_oldest_due_delivery_wait_seconds")).toBe(0);
      expect(sample(scraped, "bulwark_webhook_oldest_pending_delivery_age_seconds")).toBeGreaterThanOrEqual(
        1,
      );

      const health = await t.request("GET", "/api/v1/health");
      expect(health.status).toBe(200);
      expect(health.body.outbox).toMatchObject({ pending: 2, due: 0, oldest_due_wait_seconds: 0 });
      expect(health.body.outbox.oldest_pending_age_seconds).toBeGreaterThanOrEqual(1);
      expect(health.body.outbox.dispatcher).toBe(t.target === "in-process" ? "stopped" : "running");

      if (t.target === "in-process") {
        // An hour on, with no dispatcher running: the retry is due and waits, and that shows.
        t.clock.advanceSeconds(3600 + 400);
        const stuck = await t.request("GET", "/api/v1/health");
        expect(stuck.body.outbox).toMatchObject({ pending: 2, due: 1 });
        expect(stuck.body.outbox.oldest_due_wait_seconds).toBeGreaterThanOrEqual(60);
      }
    } finally {
      receiver.stop();
    }
  });

  test("health and scrapes have their own per-address budget: other traffic from the address cannot get them refused", async () => {
    const t = await newApp({ metrics: { enabled: true }, rate_limit: { unauthenticated_per_minute: 3 } });
    for (let request = 0; request < 5; request++) await t.request("GET", "/api/v1/nothing-here");
    expect((await t.request("GET", "/api/v1/users/me")).status).toBe(429);
    expect((await t.request("GET", "/api/v1/health")).status).toBe(200);
    expect((await t.fetch("/metrics", {})).status).toBe(200);
  });
});

describe("GET /api/v1/health", () => {
  test("lists every job with its last run and outcome, and the job metrics count the runs", async () => {
    const t = await newApp({ metrics: { enabled: true } });
    if (t.target === "in-process") {
      // serve starts the jobs; in-process they are run here, as the scheduler runs them.
      for (const job of JOBS) await runJobOnce(t.deps, job);
    } else {
      const deadline = Date.now() + 10_000;
      // Every server's health, asked directly, shows every job run.
      const allRan = async () =>
        (
          await Promise.all(
            (await t.fetchEach("/api/v1/health")).map(async (response) => (await response.json()).jobs),
          )
        ).every((jobs: { last_run_at: string | null }[]) => jobs.every((job) => job.last_run_at !== null));
      while (!(await allRan()) && Date.now() < deadline) await Bun.sleep(100);
    }
    const health = await t.request("GET", "/api/v1/health");
    expect(health.status).toBe(200);
    expect(health.body.status).toBe("ok");
    expect(health.body.jobs.map((job: { id: string }) => job.id)).toEqual(JOBS.map((job) => job.id));
    for (const job of health.body.jobs) {
      expect(job.last_outcome).toBe("ok");
      expect(Date.parse(job.last_run_at)).not.toBeNaN();
      expect(job.last_duration_ms).toBeGreaterThanOrEqual(0);
      expect(job.interval_seconds).toBe(60);
    }
    // Every server shows the same runs, whether it ran them or not (among replicas only the lease's
    // holder runs jobs), and names the server that ran them.
    const runners = (jobs: { last_run_replica: string }[]) => jobs.map((job) => job.last_run_replica);
    const answers = await Promise.all((await t.fetchEach("/api/v1/health")).map((each) => each.json()));
    for (const each of answers) {
      expect(each.jobs.map((job: { last_outcome: string }) => job.last_outcome)).toEqual(
        JOBS.map(() => "ok"),
      );
      expect(runners(each.jobs)).toEqual(runners(health.body.jobs));
    }
    if (t.target !== "in-process") {
      const leaders = new Set(answers.map((each) => each.job_leader));
      expect(leaders.size).toBe(1);
      expect(runners(health.body.jobs)).toEqual(JOBS.map(() => [...leaders][0]));
      expect(answers.map((each) => each.replica)).toContain([...leaders][0]);
    }
    const texts = await scrapeEach(t);
    for (const job of JOBS) {
      expect(total(texts, "bulwark_job_runs_total", { job: job.id, outcome: "ok" })).toBeGreaterThanOrEqual(
        1,
      );
      expect(total(texts, "bulwark_job_duration_seconds_count", { job: job.id })).toBeGreaterThanOrEqual(1);
    }
  });

  inProcessTest("is 503 degraded when the webhook dispatcher stops looking for due deliveries", async () => {
    const t = await newApp();
    expectServerErrors(503);
    // A dispatcher that started and has not polled since: stuck (a blocked loop, a hung query).
    t.deps.activity.dispatcherStarted();
    expect((await t.request("GET", "/api/v1/health")).body.outbox.dispatcher).toBe("running");
    t.clock.advanceSeconds(61);
    const stuck = await t.request("GET", "/api/v1/health");
    expect(stuck.status).toBe(503);
    expect(stuck.body).toMatchObject({
      status: "degraded",
      database: "ok",
      outbox: { dispatcher: "stalled" },
    });
    t.deps.activity.dispatcherPolled(t.clock.now());
    expect((await t.request("GET", "/api/v1/health")).status).toBe(200);
  });
});

describe("the log", () => {
  test("one JSON object per line: a line per request with its route, status, duration, ids and address", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.fetch("/api/v1/users/me", {
      headers: { authorization: `Bearer ${org.adminToken}`, "x-request-id": "trace-me-0001" },
    });
    expect(response.status).toBe(200);
    await t.fetch(`/api/v1/devices/${crypto.randomUUID()}`, {
      headers: { authorization: `Bearer ${org.adminToken}` },
    });
    await Bun.sleep(100);
    const entries = logEntries(t);
    const line = entries.find((entry) => entry.request_id === "trace-me-0001");
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      method: "GET",
      route: "/api/v1/users/me",
      path: "/api/v1/users/me",
      status: 200,
      principal: `user:${org.adminId}`,
      ip: expect.any(String),
    });
    expect(Date.parse(line?.time as string)).not.toBeNaN();
    expect(line?.duration_ms).toBeGreaterThanOrEqual(0);
    const notFound = entries.find((entry) => entry.msg === "request" && entry.status === 404);
    expect(notFound).toMatchObject({ route: "/api/v1/devices/:id", method: "GET" });
    // A path is logged up to 200 characters, however long the request line was.
    await t.fetch(`/api/v1/${"x".repeat(5000)}`, {});
    await Bun.sleep(100);
    const long = logEntries(t).find((entry) => entry.route === "unmatched") as { path: string };
    expect(long.path).toStartWith("/api/v1/xxx");
    expect(long.path.length).toBe(201);
  });

  test("a run that signs in, creates keys, tokens, webhooks and devices writes none of their secrets", async () => {
    const t = await newApp();
    if (t.target === "in-process") t.clock.set(new Date());
    const receiver = startWebhookReceiver();
    try {
      const org = await t.createOrganization();
      const login = await t.request("POST", "/api/v1/auth/login", {
        body: { email: org.adminEmail, password: TEST_PASSWORD },
      });
      const refreshed = await t.request("POST", "/api/v1/auth/refresh", {
        body: { refresh_token: login.body.refresh_token },
      });
      expect(refreshed.status).toBe(200);
      const wrong = await t.request("POST", "/api/v1/auth/login", {
        body: { email: org.adminEmail, password: "not-the-password-at-all" },
      });
      expect(wrong.status).toBe(401);
      const apiKey = await t.createApiKey(org.adminToken, ["devices:read"]);
      expect((await t.request("GET", "/api/v1/devices", { token: apiKey })).status).toBe(200);
      expect((await t.fetch("/api/v1/devices", { headers: { "x-api-key": apiKey } })).status).toBe(200);
      const webhookSecret = "whsec-log-test-0123456789";
      await subscribe(t, org.adminToken, receiver.url, webhookSecret);
      const { token: enrollmentToken } = await createEnrollmentToken(t, org.adminToken);
      const enrolled = await t.request("POST", "/api/v1/devices/enroll", {
        body: enrollBody(enrollmentToken),
      });
      expect(enrolled.status).toBe(201);
      expect((await checkIn(t, enrolled.body.device_token, { facts: HEALTHY_FACTS })).status).toBe(200);
      const user = await t.createUser(org.adminToken, "operator");
      await deliverWebhooks(t, receiver, 1);
      expect(receiver.received).toHaveLength(1);
      await Bun.sleep(100);

      const log = t.logLines.join("\n");
      // The run is there...
      expect(log).toContain("/api/v1/auth/login");
      expect(log).toContain("webhook delivery attempt");
      // ...and not one secret of it.
      const secrets = {
        password: TEST_PASSWORD,
        "wrong password": "not-the-password-at-all",
        "access token": login.body.token,
        "refresh token": login.body.refresh_token,
        "refreshed access token": refreshed.body.token,
        "refreshed refresh token": refreshed.body.refresh_token,
        "another user's token": user.token,
        "API key": apiKey,
        "webhook secret": webhookSecret,
        "enrollment token": enrollmentToken,
        "device token": enrolled.body.device_token,
      };
      for (const [name, value] of Object.entries(secrets)) {
        expect(typeof value).toBe("string");
        expect({ name, found: log.includes(value as string) }).toEqual({ name, found: false });
      }
      // Tokens in JWT form, by their signature part.
      for (const jwt of [login.body.token, login.body.refresh_token])
        expect(log).not.toContain((jwt as string).split(".")[2]);
    } finally {
      receiver.stop();
    }
  });
});

describe("server.cors_origins", () => {
  const ORIGIN = "https://dashboard.corp.example";

  test("a listed origin gets its preflight answered and may read the answers; any other gets no CORS headers", async () => {
    const t = await newApp({ server: { cors_origins: [ORIGIN] } });
    const org = await t.createOrganization();
    const preflight = await t.fetch("/api/v1/devices", {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");

    const listed = await t.fetch("/api/v1/devices", {
      headers: { origin: ORIGIN, authorization: `Bearer ${org.adminToken}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(listed.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    expect(listed.headers.get("vary")).toContain("Origin");

    const other = "https://evil.example";
    expect(preflight.headers.get("vary")).toBe("Origin");
    const refusedPreflight = await t.fetch("/api/v1/devices", {
      method: "OPTIONS",
      headers: { origin: other, "access-control-request-method": "GET" },
    });
    expect(refusedPreflight.headers.get("access-control-allow-origin")).toBeNull();
    const unlisted = await t.fetch("/api/v1/devices", {
      headers: { origin: other, authorization: `Bearer ${org.adminToken}` },
    });
    expect(unlisted.headers.get("access-control-allow-origin")).toBeNull();
    // Still marked as varying by origin, so that no cache serves it to the listed one.
    expect(unlisted.headers.get("vary")).toContain("Origin");
  });

  test("by default no origin is allowed", async () => {
    const t = await newApp();
    const preflight = await t.fetch("/api/v1/health", {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "GET" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});
