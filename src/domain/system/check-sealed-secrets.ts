import { isNotNull, like } from "drizzle-orm";
import { firstRow } from "../../db/first-row";
import { deviceCas, mfaMethods, serverKeys, webhooks } from "../../db/tables";
import { SecretBoxError } from "../../lib/secret-box";
import type { DomainDeps } from "../deps";

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
