// The four classes from their own modules: prom-client's index also loads its cluster aggregator, the
// Pushgateway (node:http, node:https), Summary and the default collectors, none of which this uses,
// and each start of the executable paid for evaluating them.
import Counter from "prom-client/lib/counter";
import Gauge from "prom-client/lib/gauge";
import Histogram from "prom-client/lib/histogram";
import Registry from "prom-client/lib/registry";

/**
 * Prometheus metrics, custom ones only: prom-client's default Node.js collectors fail promtool's naming
 * lint and describe Node internals that Bun does not have. Counters and histograms move as things
 * happen; gauges are set from a snapshot read at scrape time. Route labels are route templates
 * (`/api/v1/devices/:id`), never raw paths, so the number of series stays bounded.
 */
export interface Metrics {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  countCheckIn(compliance: string): void;
  /** An enrollment refused, by the reason its answer gave. */
  countEnrollmentRefusal(reason: string): void;
  /** A group commit of check-ins: how many it held. */
  observeCheckInBatch(size: number): void;
  countDeliveryAttempt(outcome: string): void;
  observeJobRun(job: string, outcome: "ok" | "failed", seconds: number): void;
  /** The text exposition, with the gauges set from `snapshot`. */
  render(snapshot: MetricsSnapshot): Promise<string>;
  readonly contentType: string;
}

/** What the gauges show, read from the database when scraped. */
export interface MetricsSnapshot {
  devices: { status: string; compliance: string; count: number }[];
  outbox: { pending: number; due: number; oldestPendingAgeSeconds: number; oldestDueWaitSeconds: number };
  databaseBytes: { main: number; wal: number };
  /** The connection pool, on a database server (PostgreSQL); its series are left out without one. */
  pool?: ConnectionPoolSnapshot;
  /** This server's name among the replicas on its database (server.replica_name). */
  replica: string;
  /** Whether this server runs the scheduled jobs now. */
  isJobLeader: boolean;
}

/** A database connection pool now, and the transactions it has run again since the start. */
export interface ConnectionPoolSnapshot {
  /** The most connections the pool may hold. */
  maxConnections: number;
  /** Connections open now, as the database server counts them. */
  openConnections: number;
  /** Transactions waiting for a connection of their own. */
  waitingTransactions: number;
  /** Transactions holding a connection. */
  activeTransactions: number;
  /** Statements outside a transaction not yet answered (waiting for a connection, or running). */
  pendingStatements: number;
  /** Transactions run again after a serialization failure or a deadlock. */
  retriedTransactions: number;
}

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

export function createMetrics(version: string, startedAt: Date): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: "bulwark_http_requests_total",
    help: "HTTP requests answered, by method, route template and status code.",
    labelNames: ["method", "route", "status"],
    registers,
  });
  const requestDuration = new Histogram({
    name: "bulwark_http_request_duration_seconds",
    help: "Time from receiving a request to its response being ready, by method, route template and status code.",
    labelNames: ["method", "route", "status"],
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const checkIns = new Counter({
    name: "bulwark_device_checkins_total",
    help: "Agent check-ins accepted, by the compliance they left the device in.",
    labelNames: ["compliance"],
    registers,
  });
  const enrollmentRefusals = new Counter({
    name: "bulwark_enrollments_refused_total",
    help: "Device enrollments refused, by reason (enrollment_token_unknown, enrollment_token_expired, enrollment_token_revoked, enrollment_token_used_up, hardware_id_enrolled, public_key_taken, vpn_pool_exhausted).",
    labelNames: ["reason"],
    registers,
  });
  const deliveryAttempts = new Counter({
    name: "bulwark_webhook_delivery_attempts_total",
    help: "Webhook delivery attempts, by outcome: succeeded, retrying (will be tried again) or failed (gave up).",
    labelNames: ["outcome"],
    registers,
  });
  const jobRuns = new Counter({
    name: "bulwark_job_runs_total",
    help: "Background job runs, by job and outcome (ok or failed).",
    labelNames: ["job", "outcome"],
    registers,
  });
  const jobDuration = new Histogram({
    name: "bulwark_job_duration_seconds",
    help: "Duration of background job runs, by job.",
    labelNames: ["job"],
    buckets: JOB_BUCKETS,
    registers,
  });
  const checkInBatchSize = new Histogram({
    name: "bulwark_checkin_batch_size",
    help: "Check-ins written together in one committed transaction (group commit).",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  const devices = new Gauge({
    name: "bulwark_devices",
    help: "Devices, by status and compliance.",
    labelNames: ["status", "compliance"],
    registers,
  });
  const outboxPending = new Gauge({
    name: "bulwark_webhook_deliveries_pending",
    help: "Webhook deliveries not yet delivered or given up (the outbox backlog), including those waiting for a retry.",
    registers,
  });
  const outboxDue = new Gauge({
    name: "bulwark_webhook_deliveries_due",
    help: "Active webhook subscriptions whose next delivery (deliveries go out in order) is due now.",
    registers,
  });
  const oldestPendingAge = new Gauge({
    name: "bulwark_webhook_oldest_pending_delivery_age_seconds",
    help: "Age of the oldest pending webhook delivery (0 when none).",
    registers,
  });
  const oldestDueWait = new Gauge({
    name: "bulwark_webhook_oldest_due_delivery_wait_seconds",
    help: "How long the most overdue next delivery of a subscription has waited since it became due (0 when none); grows when nothing is sending.",
    registers,
  });
  const databaseSize = new Gauge({
    name: "bulwark_database_size_bytes",
    help: "Size of the database: SQLite's main file and its write-ahead log, or the PostgreSQL database (main; wal is 0).",
    labelNames: ["file"],
    registers,
  });
  const residentMemory = new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers,
  });
  const heapUsed = new Gauge({
    name: "bulwark_heap_used_bytes",
    help: "JavaScript heap in use, in bytes.",
    registers,
  });
  new Counter({
    name: "process_cpu_seconds_total",
    help: "User and system CPU time spent, in seconds.",
    registers,
    collect() {
      const usage = process.cpuUsage();
      this.reset();
      this.inc((usage.user + usage.system) / 1e6);
    },
  });
  new Gauge({
    name: "process_start_time_seconds",
    help: "Start time of the process since the Unix epoch, in seconds.",
    registers,
  }).set(Math.floor(startedAt.getTime() / 1000));
  const buildInfo = new Gauge({
    name: "bulwark_build_info",
    help: "Always 1; the version label says which Bulwark is running, the replica label which replica this is (server.replica_name).",
    labelNames: ["version", "replica"],
    registers,
  });
  const jobLeader = new Gauge({
    name: "bulwark_job_leader",
    help: "1 when this replica runs the scheduled jobs now (on PostgreSQL one replica at a time holds their lease), else 0.",
    registers,
  });

  let poolMetrics: ((pool: ConnectionPoolSnapshot) => void) | undefined;

  return {
    observeRequest(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      requestDuration.observe(labels, seconds);
    },
    countCheckIn(compliance) {
      checkIns.inc({ compliance });
    },
    countEnrollmentRefusal(reason) {
      enrollmentRefusals.inc({ reason });
    },
    observeCheckInBatch(size) {
      checkInBatchSize.observe(size);
    },
    countDeliveryAttempt(outcome) {
      deliveryAttempts.inc({ outcome });
    },
    observeJobRun(job, outcome, seconds) {
      jobRuns.inc({ job, outcome });
      jobDuration.observe({ job }, seconds);
    },
    async render(snapshot) {
      buildInfo.reset();
      buildInfo.set({ version, replica: snapshot.replica }, 1);
      jobLeader.set(snapshot.isJobLeader ? 1 : 0);
      devices.reset();
      for (const row of snapshot.devices)
        devices.set({ status: row.status, compliance: row.compliance }, row.count);
      outboxPending.set(snapshot.outbox.pending);
      outboxDue.set(snapshot.outbox.due);
      oldestPendingAge.set(snapshot.outbox.oldestPendingAgeSeconds);
      oldestDueWait.set(snapshot.outbox.oldestDueWaitSeconds);
      databaseSize.set({ file: "main" }, snapshot.databaseBytes.main);
      databaseSize.set({ file: "wal" }, snapshot.databaseBytes.wal);
      if (snapshot.pool) {
        poolMetrics ??= createPoolMetrics(registers);
        poolMetrics(snapshot.pool);
      }
      const memory = process.memoryUsage();
      residentMemory.set(memory.rss);
      heapUsed.set(memory.heapUsed);
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

/** The connection pool's series, registered on its first snapshot; returns what sets them from one. */
function createPoolMetrics(registers: Registry[]): (pool: ConnectionPoolSnapshot) => void {
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
  const max = gauge(
    "bulwark_db_pool_max_connections",
    "Connections the PostgreSQL pool may open (database.pool_size).",
  );
  const open = gauge(
    "bulwark_db_pool_open_connections",
    "Connections to PostgreSQL this server holds open now, as PostgreSQL counts them (pg_stat_activity).",
  );
  const waiting = gauge(
    "bulwark_db_pool_waiting_transactions",
    "Transactions waiting for their turn (a server runs one at a time) or for a connection of their own.",
  );
  const active = gauge("bulwark_db_pool_active_transactions", "Transactions holding a connection.");
  const statements = gauge(
    "bulwark_db_pool_pending_statements",
    "Statements outside a transaction not yet answered (waiting for a connection, or running).",
  );
  const retries = new Counter({
    name: "bulwark_db_transaction_retries_total",
    help: "Transactions run again after PostgreSQL refused them for a serialization failure or a deadlock, or (enrollments) a unique value another server inserted first.",
    registers,
  });
  return (pool) => {
    max.set(pool.maxConnections);
    open.set(pool.openConnections);
    waiting.set(pool.waitingTransactions);
    active.set(pool.activeTransactions);
    statements.set(pool.pendingStatements);
    retries.reset();
    retries.inc(pool.retriedTransactions);
  };
}
