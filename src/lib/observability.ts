import type { Logger } from "./log";
import type { Metrics } from "./metrics";
import type { ServiceActivity } from "./service-activity";

/** What the running service reports about itself: its log, its metrics and its background work. */
export interface Observability {
  log: Logger;
  metrics: Metrics;
  activity: ServiceActivity;
}
