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

/** The stored public key by database: it never changes once made, and every check-in reports it. */
const publicKeys = new WeakMap<object, string>();

/** The VPN server's public key: `vpn.server_public_key` when set, else the one Bulwark generated. */
export function wireGuardServerPublicKey(deps: DomainDeps, db: DbOrTx = deps.db): string {
  if (deps.config.vpn.server_public_key !== "") return deps.config.vpn.server_public_key;
  const cached = publicKeys.get(deps.db);
  if (cached) return cached;
  const publicKey = requireServerKey(deps, db).publicKey;
  publicKeys.set(deps.db, publicKey);
  return publicKey;
}

/**
 * The VPN server's private key, or null when `vpn.server_public_key` is set (the operator's server keeps
 * its own). 503 when the key file beside the database does not open it.
 */
export function wireGuardServerPrivateKey(deps: DomainDeps): string | null {
  if (deps.config.vpn.server_public_key !== "") return null;
  const stored = requireServerKey(deps, deps.db);
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

/** The stored pair; only a database created behind the boot sequence's back lacks it, and gets it now. */
function requireServerKey(deps: DomainDeps, db: DbOrTx) {
  const stored = storedServerKey(db);
  if (stored) return stored;
  ensureWireGuardServerKey(deps);
  const created = storedServerKey(db);
  if (!created) throw new Error("the WireGuard server key could not be stored");
  return created;
}

function storedServerKey(db: DbOrTx) {
  return db.select().from(serverKeys).where(eq(serverKeys.name, WIREGUARD)).get();
}
