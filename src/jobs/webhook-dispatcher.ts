import type { DomainDeps } from "../domain/deps";
import { buildDeliveryRequest } from "../domain/webhooks/build-delivery-request";
import { type ClaimedDelivery, claimDelivery, findDueSubscriptions } from "../domain/webhooks/claim-delivery";
import {
  type AttemptOutcome,
  type DeliveryProgress,
  recordDeliveryAttempt,
} from "../domain/webhooks/record-delivery-attempt";
import { checkWebhookTarget, type HostnameLookup } from "../lib/network-address";
import type { Observability } from "../lib/observability";
import { type PinnedPost, postPinned } from "../lib/pinned-http";

export interface WebhookDispatcherOptions {
  /** Sends one attempt to the checked addresses; `postPinned` by default. */
  send?: PinnedPost;
  /** Resolves target hostnames; the system resolver by default. */
  lookup?: HostnameLookup;
  pollIntervalMs?: number;
  /** Subscriptions served at the same time. */
  concurrency?: number;
  /** Source of the retry jitter, in [0, 1). */
  random?: () => number;
}

export interface WebhookDispatcher {
  /** Polls for due deliveries until stopped. */
  start(): void;
  /** Stops polling and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>;
  /** Sends every delivery due now (in order per subscription) and resolves with the number of attempts. */
  runOnce(): Promise<number>;
}

const DEFAULT_POLL_INTERVAL_MS = 500;
const DEFAULT_CONCURRENCY = 16;
/** A subscription with a backlog gives up its slot after this many attempts or this long, so others get a turn. */
const MAX_ATTEMPTS_IN_A_ROW = 50;
const MAX_WORKER_MILLISECONDS = 10_000;
/** Share of the slots one organization may hold, so one tenant's slow receivers cannot starve the others. */
const MAX_SHARE_PER_ORGANIZATION = 0.25;
/** The longest pause between polls while they fail (the database is unreachable). */
const MAX_RETRY_INTERVAL_MS = 10_000;
/** Time beyond the attempt timeout before a claimed delivery counts as abandoned (a crash) and is retried. */
const LEASE_MARGIN_SECONDS = 5;

/**
 * The webhook dispatcher: sends pending deliveries, one subscription's in event order, many
 * subscriptions side by side, so a slow or dead receiver only ever holds its own queue.
 */
export function createWebhookDispatcher(
  deps: DomainDeps & Observability,
  options: WebhookDispatcherOptions = {},
): WebhookDispatcher {
  const send = options.send ?? postPinned;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const random = options.random ?? Math.random;
  const timeoutSeconds = deps.config.webhooks.timeout_seconds;
  const leaseSeconds = timeoutSeconds + LEASE_MARGIN_SECONDS;
  const slotsPerOrganization = Math.max(1, Math.floor(concurrency * MAX_SHARE_PER_ORGANIZATION));
  /** The worker serving each subscription right now, and its organization. */
  const workers = new Map<string, Promise<number>>();
  const workerOrganizations = new Map<string, string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let isStopping = false;
  /** Polls that have failed in a row. */
  let failedPolls = 0;

  async function startDueWorkers(): Promise<Promise<number>[]> {
    const capacity = concurrency - workers.size;
    if (capacity <= 0 || isStopping) return [];
    const held = new Map<string, number>();
    for (const organizationId of workerOrganizations.values())
      held.set(organizationId, (held.get(organizationId) ?? 0) + 1);
    const chosen = await findDueSubscriptions(deps, {
      limit: capacity,
      excludedWebhookIds: [...workers.keys()],
      perOrganization: slotsPerOrganization,
      heldByOrganization: held,
    });
    return chosen.map(({ webhookId, organizationId, oldestSequence }) => {
      const worker = deliverInOrder(webhookId, oldestSequence)
        .catch((error) => {
          deps.log.error("webhook dispatcher: deliveries failed", { webhook_id: webhookId, error });
          return 0;
        })
        .finally(() => {
          workers.delete(webhookId);
          workerOrganizations.delete(webhookId);
        });
      workers.set(webhookId, worker);
      workerOrganizations.set(webhookId, organizationId);
      return worker;
    });
  }

  /** Sends the subscription's due deliveries one after the other until one must wait for a retry. */
  async function deliverInOrder(webhookId: string, fromSequence: number): Promise<number> {
    let attempts = 0;
    let sequence = fromSequence;
    const deadline = performance.now() + MAX_WORKER_MILLISECONDS;
    while (attempts < MAX_ATTEMPTS_IN_A_ROW && performance.now() < deadline && !isStopping) {
      const delivery = await claimDelivery(deps, webhookId, sequence, leaseSeconds);
      if (!delivery) break;
      const outcome = await attemptDelivery(delivery);
      attempts += 1;
      const progress = await recordDeliveryAttempt(deps, delivery, outcome, random);
      reportAttempt(delivery, outcome, progress);
      // A later event may not overtake this one.
      if (progress === "retrying") break;
      sequence = delivery.eventSequence + 1;
    }
    return attempts;
  }

  /** A log line and a count per attempt; the attempt itself is in the delivery's history (the API). */
  function reportAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome, progress: DeliveryProgress) {
    if (progress === "discarded") return;
    deps.metrics.countDeliveryAttempt(progress);
    deps.log[progress === "succeeded" ? "info" : "warn"]("webhook delivery attempt", {
      outcome: progress,
      delivery_id: delivery.id,
      webhook_id: delivery.webhookId,
      organization_id: delivery.organizationId,
      event: delivery.event.type,
      event_id: delivery.event.id,
      status_code: outcome.statusCode,
      duration_ms: outcome.durationMs,
      error: outcome.error ?? undefined,
    });
  }

  async function attemptDelivery(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const startedAt = deps.clock.now();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // One deadline covers the name lookup and the request.
    const signal = AbortSignal.timeout(timeoutSeconds * 1000);
    try {
      // Checked on every attempt: the name may resolve elsewhere now than when the subscription was saved.
      const target = await abortable(
        checkWebhookTarget(delivery.url, {
          allowPrivateTargets: deps.config.webhooks.allow_private_targets,
          lookup: options.lookup,
        }),
        signal,
      );
      if (!target.ok) {
        return {
          startedAt,
          durationMs: elapsed(),
          statusCode: null,
          error: `target refused: ${target.reason}`,
        };
      }
      const { body, headers } = buildDeliveryRequest(deps.secrets, delivery, deps.clock.now());
      // Only the checked addresses are contacted, and redirects are not followed: either could
      // otherwise lead past the target check.
      const response = await send(target.url, target.addresses, { headers, body, signal });
      const durationMs = elapsed();
      return { startedAt, durationMs, statusCode: response.status, error: describeStatus(response) };
    } catch (error) {
      const message = signal.aborted
        ? `timed out after ${timeoutSeconds} s`
        : error instanceof Error
          ? error.message
          : String(error);
      return { startedAt, durationMs: elapsed(), statusCode: null, error: message };
    }
  }

  /**
   * Looks for due deliveries, then polls again after the interval. A poll that fails (the database is
   * unreachable) is logged once, and the next ones come further apart, up to MAX_RETRY_INTERVAL_MS,
   * until one succeeds again.
   */
  function poll(): void {
    deps.activity.dispatcherPolled(deps.clock.now());
    startDueWorkers().then(
      () => {
        if (failedPolls > 0)
          deps.log.info("webhook dispatcher: polling again", { failed_polls: failedPolls });
        failedPolls = 0;
        pollAgain(pollIntervalMs);
      },
      (error: unknown) => {
        if (failedPolls === 0) deps.log.error("webhook dispatcher: polling failed, retrying", { error });
        failedPolls += 1;
        pollAgain(Math.min(pollIntervalMs * 2 ** failedPolls, MAX_RETRY_INTERVAL_MS));
      },
    );
  }

  function pollAgain(delayMs: number): void {
    if (!isStopping) timer = setTimeout(poll, delayMs);
  }

  return {
    start() {
      if (timer || isStopping) return;
      deps.activity.dispatcherStarted();
      timer = setTimeout(poll, 0);
    },
    async stop() {
      isStopping = true;
      deps.activity.dispatcherStopped();
      if (timer) clearTimeout(timer);
      timer = null;
      await Promise.all(workers.values());
    },
    async runOnce() {
      const attempts = await Promise.all(await startDueWorkers());
      return attempts.reduce((sum, count) => sum + count, 0);
    },
  };
}

function describeStatus(response: Response): string | null {
  const status = response.status;
  if (status >= 200 && status < 300) return null;
  if (status === 410) return "receiver answered 410 Gone; the subscription was disabled";
  if (status >= 300 && status < 400) {
    return `redirect to ${response.headers.get("location") ?? "(no location)"} not followed`;
  }
  return `receiver answered ${status}`;
}

/** Rejects as soon as `signal` aborts, even if `promise` itself cannot be cancelled (a DNS lookup). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}
