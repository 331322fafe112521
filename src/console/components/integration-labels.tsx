import { StatusBadge } from "./status";

/** A random secret of 43 URL-safe characters (32 bytes from the browser's CSPRNG). */
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The first characters of an id, to tell rows apart when nothing else names them. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

type TokenState = "active" | "expired" | "revoked" | "used_up";

/** An enrollment token's state in a word and a symbol: only an active one enrolls devices. */
export function TokenStateBadge({ state }: { state: TokenState }) {
  const looks: Record<TokenState, [string, string]> = {
    active: ["active", "Active"],
    expired: ["timed_out", "Expired"],
    revoked: ["disabled", "Revoked"],
    used_up: ["inactive", "Used up"],
  };
  const [value, label] = looks[state];
  return <StatusBadge value={value} label={label} />;
}

/** A webhook delivery's outcome: succeeded (a 2xx), failed (out of retries) or pending (a retry is due). */
export function DeliveryStatusBadge({ status }: { status: "pending" | "succeeded" | "failed" }) {
  if (status === "succeeded") return <StatusBadge value="success" label="Succeeded" />;
  return <StatusBadge value={status} />;
}
