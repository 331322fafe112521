import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { serverKeys } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { SecretBoxError } from "../../lib/secret-box";
import { generateWireGuardKeyPair } from "../../lib/wireguard";
import type { DomainDeps } from "../deps";
import { UnavailableError } from "../errors";

const WIREGUARD = "wireguard";

/**
 * Generates the WireGuard server's key pair on first start and keeps it (the private key sealed with
 * `<database>.key`), unless `vpn.server_public_key` says the operator runs the server elsewhere. A pair
 * kept from before stays: setting the key and removing it again returns to the same server key.
 */
export function ensureWireGuardServerKey(deps: DomainDeps): void {
  if (deps.config.vpn.server_public_key !== "") return;
  if (storedServerKey(deps.db)) return;
  const pair = generateWireGuardKeyPair();
  deps.db
    .insert(serverKeys)
    .values({
      name: WIREGUARD,
      publicKey: pair.publicKey,
      sealedPrivateKey: deps.secrets.seal(pair.privateKey),
      createdAt: toIso(deps.clock.now()),
    })
    .onConflictDoNothing()
    .run();
}

/** The VPN server's public key: `vpn.server_public_key` when set, else the one Bulwark generated. */
export function wireGuardServerPublicKey(deps: DomainDeps, db: DbOrTx = deps.db): string {
  if (deps.config.vpn.server_public_key !== "") return deps.config.vpn.server_public_key;
  const stored = storedServerKey(db);
  if (stored) return stored.publicKey;
  // Only a database created behind the boot sequence's back lacks the key; make it now.
  ensureWireGuardServerKey(deps);
  return storedServerKey(db)?.publicKey ?? "";
}

/**
 * The VPN server's private key, or null when `vpn.server_public_key` is set (the operator's server keeps
 * its own). 503 when the key file beside the database does not open it.
 */
export function wireGuardServerPrivateKey(deps: DomainDeps): string | null {
  if (deps.config.vpn.server_public_key !== "") return null;
  wireGuardServerPublicKey(deps);
  const stored = storedServerKey(deps.db);
  if (!stored) return null;
  try {
    return deps.secrets.open(stored.sealedPrivateKey);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new UnavailableError(
      "vpn_server_key_unreadable",
      "the VPN server's private key is unavailable",
      "it cannot be opened with the key file beside the database (restored without it?)",
    );
  }
}

function storedServerKey(db: DbOrTx) {
  return db.select().from(serverKeys).where(eq(serverKeys.name, WIREGUARD)).get();
}
