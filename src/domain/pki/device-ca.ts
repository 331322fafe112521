import type * as X509 from "@peculiar/x509";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { deviceCas, organizations } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { SecretBoxError } from "../../lib/secret-box";
import type { DomainDeps } from "../deps";
import { NotFoundError, UnavailableError } from "../errors";
import { loadX509 } from "./x509";

/** ECDSA P-256 with SHA-256: the CA's key and every signature it makes. */
export const CA_ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** Twenty years: longer than any device certificate (one year) it will sign, so rotation is rare. */
const CA_LIFETIME_SECONDS = 20 * 365 * 86400;

/** An organization's device CA, ready to sign. */
export interface DeviceCa {
  organizationId: string;
  certificate: InstanceType<typeof X509.X509Certificate>;
  pem: string;
  privateKey: CryptoKey;
}

/** Loaded CAs by database, then organization: the private key is opened and imported once. */
const loaded = new WeakMap<object, Map<string, Promise<DeviceCa>>>();

/**
 * The organization's device CA, created on first use (an enrollment with a CSR, or ca.pem): an ECDSA
 * P-256 key whose private half is sealed with `<database>.key`, and a self-signed CA certificate (20
 * years, path length 0). Two first uses at once agree on one CA: the loser's insert is ignored.
 */
export function deviceCa(deps: DomainDeps, organizationId: string): Promise<DeviceCa> {
  let byOrganization = loaded.get(deps.db);
  if (!byOrganization) {
    byOrganization = new Map();
    loaded.set(deps.db, byOrganization);
  }
  const cached = byOrganization.get(organizationId);
  if (cached) return cached;
  const loading = loadOrCreateDeviceCa(deps, organizationId);
  byOrganization.set(organizationId, loading);
  loading.catch(() => byOrganization.delete(organizationId));
  return loading;
}

async function loadOrCreateDeviceCa(deps: DomainDeps, organizationId: string): Promise<DeviceCa> {
  const x509 = await loadX509();
  let row = await selectCa(deps, organizationId);
  if (!row) {
    const organization = await firstRow(
      deps.db
        .select({ name: organizations.name })
        .from(organizations)
        .where(eq(organizations.id, organizationId)),
    );
    if (!organization) throw new NotFoundError("organization");
    const created = await createCaCertificate(organization.name, organizationId, deps.clock.now());
    await withTransaction(
      deps.db,
      async (tx) =>
        await tx
          .insert(deviceCas)
          .values({
            organizationId,
            certificatePem: created.pem,
            sealedPrivateKey: deps.secrets.seal(created.privateKeyPem),
            createdAt: toIso(deps.clock.now()),
          })
          .onConflictDoNothing(),
    );
    row = await selectCa(deps, organizationId);
    if (!row) throw new Error("the device CA could not be stored");
  }
  let privateKeyPem: string;
  try {
    privateKeyPem = deps.secrets.open(row.sealedPrivateKey);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new UnavailableError(
      "device_ca_unreadable",
      "device certificates are unavailable",
      "the device CA's private key cannot be opened with the key file beside the database (restored without it?)",
    );
  }
  const privateKey = await crypto.subtle.importKey(
    "pkcs8",
    x509.PemConverter.decodeFirst(privateKeyPem),
    CA_ALGORITHM,
    false,
    ["sign"],
  );
  return {
    organizationId,
    certificate: new x509.X509Certificate(row.certificatePem),
    pem: row.certificatePem,
    privateKey,
  };
}

/**
 * The CA certificate (PEM) alone: served without opening the private key, so that ca.pem keeps working
 * when the key file beside the database does not match (signing then answers 503).
 */
export async function deviceCaCertificatePem(deps: DomainDeps, organizationId: string): Promise<string> {
  return (await selectCa(deps, organizationId))?.certificatePem ?? (await deviceCa(deps, organizationId)).pem;
}

async function selectCa(deps: DomainDeps, organizationId: string) {
  return await firstRow(deps.db.select().from(deviceCas).where(eq(deviceCas.organizationId, organizationId)));
}

async function createCaCertificate(
  organizationName: string,
  organizationId: string,
  now: Date,
): Promise<{ pem: string; privateKeyPem: string }> {
  const x509 = await loadX509();
  const keys = await crypto.subtle.generateKey(CA_ALGORITHM, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    // The id tells two organizations of the same name apart in a proxy's CA bundle.
    name: [
      { CN: [`Bulwark device CA ${organizationId}`] },
      { O: [organizationNameAttribute(organizationName)] },
    ],
    notBefore: now,
    notAfter: addSeconds(now, CA_LIFETIME_SECONDS),
    keys,
    signingAlgorithm: CA_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { pem: certificate.toString("pem"), privateKeyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") };
}

/** RFC 5280 caps the organizationName attribute at 64 characters; a longer name is cut there. */
export function organizationNameAttribute(name: string): string {
  return [...name].slice(0, 64).join("");
}

/**
 * A serial number of 16 random bytes, positive and of full length (RFC 5280 allows up to 20 octets and
 * asks for unpredictable serials), in uppercase hexadecimal as `openssl x509 -serial` prints it.
 */
export function randomSerialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return Buffer.from(bytes).toString("hex").toUpperCase();
}
