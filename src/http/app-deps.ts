import type { AuthDeps } from "../domain/auth/auth-deps";
import type { CheckInBatcher } from "../domain/devices/check-in-batcher";
import type { ConnectionPoolSnapshot } from "../lib/metrics";
import type { Observability } from "../lib/observability";
import type { RateLimiter } from "./rate-limiter";
import type { TlsClients } from "./tls-front";

/** Everything buildApp needs; created by main.ts (or the test helper) and passed in. */
export interface AppDeps extends AuthDeps, Observability {
  rateLimiter: RateLimiter;
  /** Writes check-ins that arrive together in one transaction (group commit). */
  checkIns: CheckInBatcher;
  version: string;
  startedAt: Date;
  /** On PostgreSQL: the connection pool as the metrics show it, read at each scrape. */
  connectionPool?: () => Promise<ConnectionPoolSnapshot>;
  /** Set when Bulwark terminates TLS itself: the client and certificate behind each loopback connection. */
  tlsClients?: TlsClients;
}
