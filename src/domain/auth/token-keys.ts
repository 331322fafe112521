import { desc } from "drizzle-orm";
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import type { Db } from "../../db/client";
import { withTransaction } from "../../db/client";
import { signingKeys } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";

const ALGORITHM = "ES256";

export interface SigningKey {
  id: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** The JWT keys of this server: generated on first start, kept in the database, loaded once at boot. */
export interface TokenKeys {
  algorithm: typeof ALGORITHM;
  current: SigningKey;
  /** Public keys by id, for verification and the JWKS document. */
  verificationKeys: Map<string, { key: CryptoKey; jwk: JWK }>;
  /** Claims of tokens whose signature already verified, by token, so each is checked once (see tokens.ts). */
  verifiedClaims: Map<string, { claims: Record<string, unknown>; expiresAtMs: number }>;
}

/**
 * Loads the signing keys, creating the first one if the database has none. Servers starting at once on a
 * fresh database create one key between them: the check and the insert are one transaction (on
 * PostgreSQL a serializable one, so the second server's is run again and finds the first's key), and
 * every server signs with, and verifies, the same keys.
 */
export async function loadOrCreateTokenKeys(db: Db, now: Date): Promise<TokenKeys> {
  let rows = await db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
  if (rows.length === 0) {
    const pair = await generateKeyPair(ALGORITHM, { extractable: true });
    const id = newId();
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: id, alg: ALGORITHM, use: "sig" };
    const privateJwk = { ...(await exportJWK(pair.privateKey)), kid: id, alg: ALGORITHM };
    rows = await withTransaction(db, async (tx) => {
      const found = await tx.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
      if (found.length > 0) return found;
      await tx.insert(signingKeys).values({
        id,
        algorithm: ALGORITHM,
        privateJwk: JSON.stringify(privateJwk),
        publicJwk: JSON.stringify(publicJwk),
        createdAt: toIso(now),
      });
      return await tx.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
    });
  }
  const verificationKeys = new Map<string, { key: CryptoKey; jwk: JWK }>();
  for (const row of rows) {
    const jwk = JSON.parse(row.publicJwk) as JWK;
    verificationKeys.set(row.id, { key: (await importJWK(jwk, ALGORITHM)) as CryptoKey, jwk });
  }
  const newest = rows[0];
  if (!newest) throw new Error("no signing key could be created");
  const privateKey = (await importJWK(JSON.parse(newest.privateJwk) as JWK, ALGORITHM)) as CryptoKey;
  return {
    algorithm: ALGORITHM,
    current: { id: newest.id, privateKey, publicJwk: JSON.parse(newest.publicJwk) as JWK },
    verificationKeys,
    verifiedClaims: new Map(),
  };
}

/** The public JSON Web Key Set published at /.well-known/jwks.json. */
export function publicJwks(keys: TokenKeys): { keys: JWK[] } {
  return { keys: [...keys.verificationKeys.values()].map((entry) => entry.jwk) };
}
