import { eq } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { SERVER_KEY_NAME } from "../../db/lookups";
import { serverKeys } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { SecretBoxError } from "../../lib/secret-box";
import { generateWireGuardKeyPair } from "../../lib/wireguard";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { UnavailableError } from "../errors";

const WIREGUARD = SERVER_KEY_NAME;

/**
 * Generates the WireGuard server's key pair on first start and keeps it (the private key sealed with
 * `<database>.key`), unless `vpn.server_public_key` says the operator runs the server elsewhere. A pair
 * kept from before stays: setting the key and removing it again returns to the same server key (unless
 * a second organization was created meanwhile, which replaces it: rotateWireGuardServerKey).
 */
export async function ensureWireGuardServerKey(deps: DomainDeps): Promise<void> {
  if (deps.config.vpn.server_public_key !== "") return;
  if (await storedServerKey(deps.db)) return;
  await storeServerKey(deps);
}

/** Stores a new pair unless one is there already (another process was first); returns the one kept. */
async function storeServerKey(deps: DomainDeps) {
  const pair = generateWireGuardKeyPair();
  return await withTransaction(deps.db, async (tx) => {
    await tx
      .insert(serverKeys)
      .values({
        name: WIREGUARD,
        publicKey: pair.publicKey,
        sealedPrivateKey: deps.secrets.seal(pair.privateKey),
        createdAt: toIso(deps.clock.now()),
      })
      .onConflictDoNothing();
    return await storedServerKey(tx);
  });
}

/**
 * The VPN server's public key: `vpn.server_public_key` when set, else the one Bulwark generated (`stored`
 * when the caller read it along with its own row, as the check-in does).
 */
export async function wireGuardServerPublicKey(
  deps: DomainDeps,
  stored: string | null = null,
): Promise<string> {
  if (deps.config.vpn.server_public_key !== "") return deps.config.vpn.server_public_key;
  return stored ?? (await requireServerKey(deps, deps.db)).publicKey;
}

/**
 * Replaces the pair Bulwark keeps with a new one, in the caller's transaction, and audits it
 * (`vpn.server_key_rotated`, in `organizationId`'s log: its devices are the ones that switch). Called
 * when the installation gets its second organization: the first one's admins could export the old
 * private key while theirs was the only organization, and must not be able to impersonate the server
 * to the new tenant's devices. A pair kept while `vpn.server_public_key` is set is replaced too (it
 * would come back if the setting were removed); then `isInUse` is false and devices are not affected.
 * Returns null when there is no pair to replace.
 */
export async function rotateWireGuardServerKey(
  deps: DomainDeps,
  tx: DbOrTx,
  now: Date,
  organizationId: string,
): Promise<{ publicKey: string; isInUse: boolean } | null> {
  const previous = await storedServerKey(tx);
  if (!previous) return null;
  const pair = generateWireGuardKeyPair();
  await tx
    .update(serverKeys)
    .set({
      publicKey: pair.publicKey,
      sealedPrivateKey: deps.secrets.seal(pair.privateKey),
      createdAt: toIso(now),
    })
    .where(eq(serverKeys.name, WIREGUARD));
  const isInUse = deps.config.vpn.server_public_key === "";
  await recordAudit(tx, now, systemActor(organizationId), {
    action: "vpn.server_key_rotated",
    targetType: "organization",
    targetId: organizationId,
    details: {
      previous_public_key: previous.publicKey,
      public_key: pair.publicKey,
      in_use: isInUse,
      reason: "the installation now has several organizations",
    },
  });
  return { publicKey: pair.publicKey, isInUse };
}

/**
 * The VPN server's private key, or null when `vpn.server_public_key` is set (the operator's server keeps
 * its own). 503 when the key file beside the database does not open it.
 */
export async function wireGuardServerPrivateKey(deps: DomainDeps): Promise<string | null> {
  if (deps.config.vpn.server_public_key !== "") return null;
  const stored = await requireServerKey(deps, deps.db);
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
async function requireServerKey(deps: DomainDeps, db: DbOrTx) {
  const stored = await storedServerKey(db);
  if (stored) return stored;
  const created = await storeServerKey(deps);
  if (!created) throw new Error("the WireGuard server key could not be stored");
  return created;
}

async function storedServerKey(db: DbOrTx) {
  return await firstRow(db.select().from(serverKeys).where(eq(serverKeys.name, WIREGUARD)));
}
