import { isNotNull, like } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { deviceCas, mfaMethods, serverKeys, webhooks } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { SecretBoxError } from "../../lib/secret-box";
import type { DomainDeps } from "../deps";

/** The row of server_keys that holds the key check (keyCheck), beside the VPN server's key pair. */
const KEY_CHECK = "key-check";

/**
 * Seals a value into the database at its first start on PostgreSQL (a row of server_keys named
 * `key-check`, written once), so that every later start, on any replica, has something sealed to prove
 * its key file against (sealedSecretsReadable), even when the first start sealed nothing else (with
 * `vpn.server_public_key` set, no VPN server key is made).
 */
export async function sealKeyCheck(deps: Pick<DomainDeps, "db" | "secrets" | "clock">): Promise<void> {
  await withTransaction(deps.db, async (tx) => {
    await tx
      .insert(serverKeys)
      .values({
        name: KEY_CHECK,
        publicKey: "",
        sealedPrivateKey: deps.secrets.seal("bulwark key check"),
        createdAt: toIso(deps.clock.now()),
      })
      .onConflictDoNothing();
  });
}

/**
 * Whether the key file opens the secrets sealed in this database; false after a database was restored
 * (or copied) without its `<database>.key`, when webhook signatures, authenticator apps, device
 * certificates and the VPN server's key cannot work.
 * One sealed value of each kind is tried: they are all sealed with the same key.
 */
export async function sealedSecretsReadable(deps: Pick<DomainDeps, "db" | "secrets">): Promise<boolean> {
  const samples = [
    await firstRow(
      deps.db.select({ sealed: webhooks.secret }).from(webhooks).where(like(webhooks.secret, "sealed:v1:%")),
    ),
    await firstRow(
      deps.db.select({ sealed: mfaMethods.secret }).from(mfaMethods).where(isNotNull(mfaMethods.secret)),
    ),
    await firstRow(deps.db.select({ sealed: serverKeys.sealedPrivateKey }).from(serverKeys)),
    await firstRow(deps.db.select({ sealed: deviceCas.sealedPrivateKey }).from(deviceCas)),
  ];
  try {
    for (const sample of samples) if (sample?.sealed) deps.secrets.open(sample.sealed);
    return true;
  } catch (error) {
    if (error instanceof SecretBoxError) return false;
    throw error;
  }
}
