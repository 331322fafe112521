/** A new UUID (version 7: time-ordered, so primary-key indexes stay append-mostly). */
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
