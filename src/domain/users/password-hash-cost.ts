import type { PasswordHashCost } from "../../lib/secrets";
import type { DomainDeps } from "../deps";

/** The configured argon2id cost. */
export function passwordHashCost(deps: DomainDeps): PasswordHashCost {
  return {
    memoryKib: deps.config.auth.password_hash_memory_kib,
    iterations: deps.config.auth.password_hash_iterations,
  };
}
