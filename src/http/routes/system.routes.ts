import { createHash, timingSafeEqual } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { replicaName } from "../../config/load-config";
import { publicJwks } from "../../domain/auth/token-keys";
import { DomainError, UnauthenticatedError, UnavailableError } from "../../domain/errors";
import { checkDatabase, databaseStore } from "../../domain/system/check-database";
import { type OutboxState, operationalSnapshot, outboxState } from "../../domain/system/operational-snapshot";
import { readSharedJobRuns, type SharedJobRun } from "../../jobs/job-runs";
import { JOBS } from "../../jobs/jobs";
import type { MetricsSnapshot } from "../../lib/metrics";
import type { JobRunRecord } from "../../lib/service-activity";
import type { AppDeps } from "../app-deps";
import { errorResponses } from "../schemas/common";
import { JwksSchema } from "./auth.schemas";

/** A polling dispatcher checks for due deliveries every half second; this long without a poll is stuck. */
const DISPATCHER_STALL_SECONDS = 60;

const JobHealthSchema = Type.Object(
  {
    id: Type.String({ description: "The job's name, as in the logs and the job metrics" }),
    interval_seconds: Type.Integer(),
    last_run_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "When the last run started, on any server of the database; null before the first run",
    }),
    last_outcome: Type.Union([Type.Literal("ok"), Type.Literal("failed"), Type.Null()], {
      description: "failed: the run threw (the log has the error); the next run is still on schedule",
    }),
    last_duration_ms: Type.Union([Type.Number(), Type.Null()]),
    last_run_replica: Type.Union([Type.String(), Type.Null()], {
      description:
        "The server that ran it (server.replica_name): among replicas, the holder of the job lease then. Every replica shows the same last runs",
    }),
  },
  { title: "JobHealth" },
);

const OutboxHealthSchema = Type.Object(
  {
    pending: Type.Integer({
      description: "Deliveries not yet delivered or given up, including those waiting for a retry",
    }),
    due: Type.Integer({
      description:
        "Active subscriptions whose next delivery is due now (a subscription's deliveries go out in order: those behind one waiting for its retry are not due)",
    }),
    oldest_pending_age_seconds: Type.Integer({ description: "Age of the oldest pending delivery (0: none)" }),
    oldest_due_wait_seconds: Type.Integer({
      description:
        "How long the most overdue of those has waited since it became due (0: none); grows only when nothing is sending",
    }),
    dispatcher: Type.Union([Type.Literal("running"), Type.Literal("stopped"), Type.Literal("stalled")], {
      description: `stalled: it has not looked for due deliveries for ${DISPATCHER_STALL_SECONDS} s`,
    }),
  },
  { title: "OutboxHealth" },
);

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded"), Type.Literal("starting")], {
      description:
        "starting: the server is listening but has not finished its start (migrations done; the first admin, jobs and webhook dispatcher not yet): requests other than this one wait until it has",
    }),
    version: Type.String(),
    database: Type.Union([Type.Literal("ok"), Type.Literal("unreachable")]),
    store: Type.Union([Type.Literal("sqlite"), Type.Literal("postgresql")], {
      description: "the database this server runs on",
    }),
    uptime_seconds: Type.Integer(),
    replica: Type.String({
      description:
        "this server's name among the replicas on one database (server.replica_name; by default its host name and port)",
    }),
    job_leader: Type.Union([Type.String(), Type.Null()], {
      description:
        "the replica running the scheduled jobs, as this one last saw it (on PostgreSQL one replica at a time holds their lease; on SQLite it is this server); null until the scheduler has started",
    }),
    jobs: Type.Array(JobHealthSchema, {
      description:
        "each job's last run, by whichever replica ran it (every replica shows the same; a run the database could not record shows only on the replica that ran it)",
    }),
    outbox: Type.Union([OutboxHealthSchema, Type.Null()], {
      description: "null when the database cannot be read",
    }),
  },
  { title: "Health" },
);

/** The dispatcher's state: stalled when it is meant to run but has not polled for a while. */
function dispatcherState(deps: AppDeps): "running" | "stopped" | "stalled" {
  const { isRunning, lastPollAt } = deps.activity.dispatcher();
  if (!isRunning) return "stopped";
  const since = lastPollAt ?? deps.startedAt;
  return deps.clock.now().getTime() - since.getTime() > DISPATCHER_STALL_SECONDS * 1000
    ? "stalled"
    : "running";
}

async function readOutbox(deps: AppDeps): Promise<OutboxState | null> {
  try {
    return await outboxState(deps);
  } catch {
    return null;
  }
}

/**
 * Reads the jobs' last runs recorded in the database; when they cannot be read (logged once until they
 * can), none, and each server shows its own.
 */
function jobRunsReader(deps: AppDeps): () => Promise<Map<string, SharedJobRun>> {
  let isFailing = false;
  return async () => {
    try {
      const runs = await readSharedJobRuns(deps.db);
      isFailing = false;
      return runs;
    } catch (error) {
      if (!isFailing) deps.log.warn("health: the jobs' last runs could not be read", { error });
      isFailing = true;
      return new Map();
    }
  };
}

/**
 * A job's last run: the one recorded in the database, unless this server's own run could not be
 * recorded and is newer (or there is none), which it then shows alone.
 */
function latestRun(
  shared: SharedJobRun | undefined,
  own: JobRunRecord | null,
  replica: string,
): SharedJobRun | null {
  if (own && !own.recorded && (!shared || own.startedAt > shared.startedAt)) {
    const { recorded: _, ...run } = own;
    return { ...run, replica };
  }
  return shared ?? null;
}

/** Equal-time comparison of the presented bearer token with metrics.token. */
function isMetricsTokenValid(expected: string, authorization: string | null): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/** Health check, Prometheus metrics and the JWKS document; no user authentication. */
export function systemRoutes(deps: AppDeps) {
  const readJobRuns = jobRunsReader(deps);
  return new Elysia({ tags: ["System"] })
    .get(
      "/api/v1/health",
      async ({ set }) => {
        const isDatabaseOk = await checkDatabase(deps);
        const [outbox, runs] = isDatabaseOk
          ? await Promise.all([readOutbox(deps), readJobRuns()])
          : [null, new Map<string, SharedJobRun>()];
        const dispatcher = dispatcherState(deps);
        const isStarting = deps.activity.isStarting;
        const isHealthy = isDatabaseOk && outbox !== null && dispatcher !== "stalled" && !isStarting;
        if (!isHealthy) set.status = 503;
        return {
          status: isStarting ? ("starting" as const) : isHealthy ? ("ok" as const) : ("degraded" as const),
          version: deps.version,
          database: isDatabaseOk ? ("ok" as const) : ("unreachable" as const),
          store: databaseStore(deps),
          uptime_seconds: Math.floor((deps.clock.now().getTime() - deps.startedAt.getTime()) / 1000),
          replica: replicaName(deps.config),
          job_leader: deps.activity.jobLeader(),
          jobs: JOBS.map((job) => {
            const run = latestRun(
              runs.get(job.id),
              deps.activity.lastJobRun(job.id),
              replicaName(deps.config),
            );
            return {
              id: job.id,
              interval_seconds: job.intervalSeconds(deps.config),
              last_run_at: run?.startedAt.toISOString() ?? null,
              last_outcome: run?.outcome ?? null,
              last_duration_ms: run ? Math.round(run.durationMs * 100) / 100 : null,
              last_run_replica: run?.replica ?? null,
            };
          }),
          outbox: outbox && {
            pending: outbox.pending,
            due: outbox.due,
            oldest_pending_age_seconds: outbox.oldestPendingAgeSeconds,
            oldest_due_wait_seconds: outbox.oldestDueWaitSeconds,
            dispatcher,
          },
        };
      },
      {
        response: { 200: HealthSchema, 503: HealthSchema, ...errorResponses(429) },
        detail: {
          summary: "Health check",
          description:
            "503 (status starting) from the moment the server listens until its start has finished, first " +
            "admin included: wait for a 200 before signing in. " +
            "503 (status degraded) when the database cannot be reached or the webhook dispatcher has " +
            `stopped looking for due deliveries for ${DISPATCHER_STALL_SECONDS} s. A failed job run or a ` +
            "backlog does not fail the check: they are shown in jobs and outbox, for an operator to read " +
            "and alert on.",
          security: [],
        },
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        if (!deps.config.metrics.enabled)
          throw new DomainError(
            "not_found",
            "metrics_disabled",
            "metrics are off",
            "set metrics.enabled = true (or BULWARK_METRICS_ENABLED=true) to serve them",
          );
        const token = deps.config.metrics.token;
        if (token !== "" && !isMetricsTokenValid(token, request.headers.get("authorization")))
          throw new UnauthenticatedError(
            "metrics_token_invalid",
            "invalid or missing authentication",
            "send Authorization: Bearer <metrics.token>",
          );
        let snapshot: MetricsSnapshot;
        try {
          const pool = await deps.connectionPool?.();
          snapshot = {
            ...(await operationalSnapshot(deps)),
            ...(pool ? { pool } : {}),
            replica: replicaName(deps.config),
            isJobLeader: deps.activity.isJobLeader,
          };
        } catch (error) {
          deps.log.error("metrics: the database could not be read", { error });
          throw new UnavailableError(
            "database_unavailable",
            "service unavailable",
            "the database could not be read",
          );
        }
        const text = await deps.metrics.render(snapshot);
        return new Response(text, { headers: { "content-type": deps.metrics.contentType } });
      },
      {
        response: { 200: Type.String(), ...errorResponses(401, 404, 429, 503) },
        detail: {
          summary: "Prometheus metrics",
          description:
            "The Prometheus text format: requests by route template and status with latency " +
            "histograms, devices by status and compliance, check-ins, the webhook outbox (backlog, due, " +
            "oldest ages), delivery attempts by outcome, job runs and durations, database size, on " +
            "PostgreSQL the connection pool (maximum, open connections, transactions waiting and active) " +
            "and transactions retried after a serialization failure, memory and CPU. 404 unless metrics.enabled; when metrics.token is set, a scrape sends it as " +
            "Authorization: Bearer <token>.",
          security: [{ metricsToken: [] }, {}],
        },
      },
    )
    .get("/.well-known/jwks.json", () => publicJwks(deps.keys), {
      response: { 200: JwksSchema, ...errorResponses(429) },
      detail: { summary: "Public keys that verify Bulwark's access tokens (JWKS)", security: [] },
    });
}
