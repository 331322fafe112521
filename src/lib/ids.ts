/** A new UUID (version 7: time-ordered, so primary-key indexes stay append-mostly). */
export function newId(): string {
  return Bun.randomUUIDv7();
}
