import type { Config } from "../config/config-schema";
import { purgeExpiredCredentials } from "../domain/auth/purge-expired-credentials";
import type { AppDeps } from "../http/app-deps";

/** A named background job; tests call `run` directly with a fake clock. */
export interface Job {
  id: string;
  intervalSeconds(config: Readonly<Config>): number;
  run(deps: AppDeps): Promise<unknown> | unknown;
}

/** Every job, in one list. */
export const JOBS: readonly Job[] = [
  {
    id: "purge-expired-credentials",
    intervalSeconds: (config) => config.jobs.scan_interval_seconds,
    run: (deps) => purgeExpiredCredentials(deps),
  },
];
