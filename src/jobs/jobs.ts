import type { Config } from "../config/config-schema";
import { purgeExpiredCredentials } from "../domain/auth/purge-expired-credentials";
import type { DomainDeps } from "../domain/deps";
import { markOfflineDevices } from "../domain/devices/mark-offline-devices";
import { purgeDeviceLogs } from "../domain/devices/purge-device-logs";
import { purgeExpiredDeviceCredentials } from "../domain/devices/purge-expired-device-credentials";
import { reevaluateStaleDevices } from "../domain/devices/reevaluate-stale-devices";
import { timeOutWipes } from "../domain/devices/time-out-wipes";
import { purgeExpiredSsoState } from "../domain/sso/purge-expired-sso-state";
import { purgeDeliveries } from "../domain/webhooks/purge-deliveries";

/** A named background job; tests call `run` directly with a fake clock. */
export interface Job {
  id: string;
  intervalSeconds(config: Readonly<Config>): number;
  run(deps: DomainDeps): Promise<unknown> | unknown;
}

/** Every job, in one list. */
export const JOBS: readonly Job[] = [
  {
    id: "purge-expired-credentials",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeExpiredCredentials(deps),
  },
  {
    id: "purge-expired-sso-state",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeExpiredSsoState(deps),
  },
  {
    id: "mark-offline-devices",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => markOfflineDevices(deps),
  },
  {
    id: "time-out-wipes",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => timeOutWipes(deps),
  },
  {
    id: "purge-expired-device-credentials",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeExpiredDeviceCredentials(deps),
  },
  {
    id: "reevaluate-stale-compliance",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => reevaluateStaleDevices(deps),
  },
  {
    id: "purge-device-logs",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeDeviceLogs(deps),
  },
  {
    id: "purge-webhook-deliveries",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeDeliveries(deps),
  },
];
