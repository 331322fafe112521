/**
 * CMS SignedData (RFC 5652), the envelope of a signed configuration profile: the content itself inside
 * (`eContent`), one signer with the signed attributes Apple's profile tools and OpenSSL write
 * (content type, message digest, signing time), ECDSA P-256 with SHA-256, and the signer's certificate
 * chain. Built with @peculiar/asn1-cms, already here as @peculiar/x509's dependency; `openssl smime
 * -verify` is the independent check (test/http/phone-profiles.test.ts).
 */

import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import type * as X509 from "@peculiar/x509";
import { loadX509 } from "./x509";

/** The signer: its certificate, its private key (ECDSA P-256) and the certificates above it. */
export interface CmsSigner {
  certificate: InstanceType<typeof X509.X509Certificate>;
  privateKey: CryptoKey;
  chain: InstanceType<typeof X509.X509Certificate>[];
}

const ID_SHA256 = "2.16.840.1.101.3.4.2.1";
const ID_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";

/** `content` signed by `signer`, as DER (`application/pkcs7-mime`; a .mobileconfig as Apple signs it). */
export async function signCms(
  content: Uint8Array<ArrayBuffer>,
  signer: CmsSigner,
  now: Date,
): Promise<Uint8Array<ArrayBuffer>> {
  await loadX509(); // loads reflect-metadata, which the ASN.1 classes' decorators need first
  const cms = await import("@peculiar/asn1-cms");
  const { Certificate, Time } = await import("@peculiar/asn1-x509");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", content));
  const attributes = [
    new cms.Attribute({
      attrType: cms.id_contentType,
      attrValues: [derObjectIdentifier(cms.id_data).buffer as ArrayBuffer],
    }),
    new cms.Attribute({
      attrType: cms.id_signingTime,
      attrValues: [AsnConvert.serialize(new Time(now))],
    }),
    new cms.Attribute({
      attrType: cms.id_messageDigest,
      attrValues: [AsnConvert.serialize(new OctetString(digest))],
    }),
  ];
  // DER sorts a SET OF by each element's encoding; the signature covers the set with its SET tag.
  const encoded = attributes
    .map((attribute) => ({ attribute, der: new Uint8Array(AsnConvert.serialize(attribute)) }))
    .sort((a, b) => Buffer.compare(a.der, b.der));
  const signedAttributes = derElement(0x31, Buffer.concat(encoded.map((item) => item.der)));
  const signature = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    signer.privateKey,
    signedAttributes,
  );
  const signerCertificate = AsnConvert.parse(signer.certificate.rawData, Certificate);
  const signerInfo = new cms.SignerInfo({
    version: cms.CMSVersion.v1,
    sid: new cms.SignerIdentifier({
      issuerAndSerialNumber: new cms.IssuerAndSerialNumber({
        issuer: signerCertificate.tbsCertificate.issuer,
        serialNumber: signerCertificate.tbsCertificate.serialNumber,
      }),
    }),
    digestAlgorithm: new cms.DigestAlgorithmIdentifier({ algorithm: ID_SHA256 }),
    signedAttrs: encoded.map((item) => item.attribute),
    signatureAlgorithm: new cms.SignatureAlgorithmIdentifier({ algorithm: ID_ECDSA_WITH_SHA256 }),
    signature: new OctetString(ecdsaSignatureDer(new Uint8Array(signature))),
  });
  const signedData = new cms.SignedData({
    version: cms.CMSVersion.v1,
    digestAlgorithms: new cms.DigestAlgorithmIdentifiers([
      new cms.DigestAlgorithmIdentifier({ algorithm: ID_SHA256 }),
    ]),
    encapContentInfo: new cms.EncapsulatedContentInfo({
      eContentType: cms.id_data,
      eContent: new cms.EncapsulatedContent({ single: new OctetString(content) }),
    }),
    certificates: new cms.CertificateSet(
      [signer.certificate, ...signer.chain].map(
        (certificate) =>
          new cms.CertificateChoices({ certificate: AsnConvert.parse(certificate.rawData, Certificate) }),
      ),
    ),
    signerInfos: new cms.SignerInfos([signerInfo]),
  });
  const contentInfo = new cms.ContentInfo({
    contentType: cms.id_signedData,
    content: AsnConvert.serialize(signedData),
  });
  return new Uint8Array(AsnConvert.serialize(contentInfo));
}

/** An OBJECT IDENTIFIER, DER-encoded (the value of the content-type attribute). */
function derObjectIdentifier(oid: string): Uint8Array {
  const [first = 0, second = 0, ...rest] = oid.split(".").map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return derElement(0x06, Uint8Array.from(bytes));
}

/** A DER element: tag, definite length, contents. */
function derElement(tag: number, contents: Uint8Array): Uint8Array<ArrayBuffer> {
  const length = contents.length;
  const lengthBytes =
    length < 0x80
      ? [length]
      : (() => {
          const bytes: number[] = [];
          for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
          return [0x80 | bytes.length, ...bytes];
        })();
  return Uint8Array.from([tag, ...lengthBytes, ...contents]);
}

/** WebCrypto's ECDSA signature (r ‖ s, each 32 bytes for P-256) as the DER SEQUENCE { r, s } CMS carries. */
function ecdsaSignatureDer(raw: Uint8Array): Uint8Array {
  const half = raw.length / 2;
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = bytes.subarray(start);
    const padded = (trimmed[0] ?? 0) & 0x80 ? Uint8Array.from([0, ...trimmed]) : trimmed;
    return derElement(0x02, padded);
  };
  return derElement(0x30, Buffer.concat([integer(raw.subarray(0, half)), integer(raw.subarray(half))]));
}
