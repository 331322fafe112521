import type { Config } from "../config/config-schema";
import type { Db } from "../db/client";
import type { Clock } from "../lib/clock";
import type { SecretBox } from "../lib/secret-box";

/** What every domain function needs; passed in, never imported as a singleton. */
export interface DomainDeps {
  db: Db;
  config: Readonly<Config>;
  clock: Clock;
  /** Seals the secrets the service reads back (webhook signing secrets) with the key beside the database. */
  secrets: SecretBox;
}

/** Who is acting, for audit rows and `changed_by` fields. */
export interface Actor {
  type: "user" | "api_key" | "device" | "system" | "anonymous";
  id: string | null;
  /** Human-readable identity: a user's email, an API key's name. */
  label: string | null;
  organizationId: string | null;
  ip: string | null;
}

export function systemActor(organizationId: string | null = null): Actor {
  return { type: "system", id: null, label: "system", organizationId, ip: null };
}
