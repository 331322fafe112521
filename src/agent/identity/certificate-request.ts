/**
 * The device certificate's key (ECDSA P-256, made here and never sent) and its PKCS#10 request, made
 * in-process with @peculiar/x509 (loaded on first use, reflect-metadata first, as the server does).
 */
export async function makeCertificateRequest(
  commonName: string,
): Promise<{ csrPem: string; privateKeyPem: string }> {
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
  const keys = (await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    // The server names the certificate after the device id; this name is only the request's.
    name: `CN=${commonName.replace(/[,+="\\<>;#]/g, "_")}`,
    keys,
    signingAlgorithm: algorithm,
  });
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return { csrPem: request.toString("pem"), privateKeyPem };
}
