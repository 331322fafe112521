import { createPublicKey } from "node:crypto";
import type * as X509 from "@peculiar/x509";
import { ValidationError } from "../errors";
import { loadX509 } from "./x509";

/** Longer PEM text is not a CSR for a P-256 or RSA key (an RSA-8192 request is under 6 KB). */
const MAX_CSR_CHARS = 16_384;
const MAX_RSA_BITS = 8192;

/** A certificate signing request whose signature verified, and the kind of key it carries. */
export interface VerifiedCsr {
  publicKey: InstanceType<typeof X509.PublicKey>;
  keyType: "ec" | "rsa";
}

/**
 * Reads a PKCS#10 request (PEM) and checks it: an ECDSA P-256 key or an RSA key of 2048 to 8192 bits,
 * and a signature made with that key (proof that the device holds the private key). Its subject and
 * extensions are ignored: the certificate's contents are the server's to decide. Anything else is a
 * 400 on `field`.
 */
export async function verifyCertificateSigningRequest(pem: string, field = "csr"): Promise<VerifiedCsr> {
  const x509 = await loadX509();
  const refuse = (message: string): never => {
    throw new ValidationError("invalid request body", [
      { field, message, received: pem.length > 200 ? `${pem.slice(0, 200)}...` : pem },
    ]);
  };
  if (pem.length > MAX_CSR_CHARS) refuse(`must be at most ${MAX_CSR_CHARS} characters`);
  if (!/-----BEGIN (NEW )?CERTIFICATE REQUEST-----/.test(pem))
    refuse(
      "must be a PEM certificate signing request (-----BEGIN CERTIFICATE REQUEST-----), as `openssl req` writes it",
    );
  let request: InstanceType<typeof X509.Pkcs10CertificateRequest>;
  try {
    request = new x509.Pkcs10CertificateRequest(
      pem.replace(/NEW CERTIFICATE REQUEST/g, "CERTIFICATE REQUEST"),
    );
  } catch {
    return refuse("is not a readable PKCS#10 certificate signing request");
  }
  let keyType: "ec" | "rsa";
  try {
    const key = createPublicKey({ key: Buffer.from(request.publicKey.rawData), format: "der", type: "spki" });
    const details = key.asymmetricKeyDetails ?? {};
    if (key.asymmetricKeyType === "ec" && details.namedCurve === "prime256v1") keyType = "ec";
    else if (
      key.asymmetricKeyType === "rsa" &&
      (details.modulusLength ?? 0) >= 2048 &&
      (details.modulusLength ?? 0) <= MAX_RSA_BITS
    )
      keyType = "rsa";
    else {
      const found =
        key.asymmetricKeyType === "ec"
          ? `an EC key on ${details.namedCurve ?? "an unknown curve"}`
          : key.asymmetricKeyType === "rsa"
            ? `an RSA key of ${details.modulusLength} bits`
            : `a key of type ${key.asymmetricKeyType}`;
      return refuse(
        `must carry an ECDSA P-256 key or an RSA key of 2048 to ${MAX_RSA_BITS} bits, not ${found}`,
      );
    }
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    return refuse("carries a public key that cannot be read");
  }
  let isSigned = false;
  try {
    isSigned = await request.verify();
  } catch {
    isSigned = false;
  }
  if (!isSigned)
    refuse("has a signature that does not verify with its own key (a damaged or altered request)");
  return { publicKey: request.publicKey, keyType };
}
