import type { Actor } from "../deps";

/** The `changed_by` of policy history: the actor's email or API key name. */
export function changedByOf(actor: Actor): string {
  return actor.label ?? actor.type;
}
