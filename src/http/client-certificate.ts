import { UnauthenticatedError } from "../domain/errors";

const RFC_9440 = /^:([A-Za-z0-9+/]+={0,2}):$/;
const PEM_BODY = /^-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----\s*$/;

/**
 * The DER bytes of the client certificate a trusted proxy forwarded in the `Client-Cert` header:
 * RFC 9440's byte sequence (`:` base64 DER `:`, as HAProxy writes with `:%[ssl_c_der,base64]:`), or
 * the URL-encoded PEM nginx writes with `$ssl_client_escaped_cert`. Null when the header is absent or
 * empty (the proxy saw no certificate); a value in neither form is a 401, not silently ignored.
 */
export function parseClientCertHeader(value: string | null): Uint8Array | null {
  const text = value?.trim() ?? "";
  if (text === "") return null;
  const sequence = RFC_9440.exec(text);
  if (sequence?.[1]) return new Uint8Array(Buffer.from(sequence[1], "base64"));
  let pem = text;
  try {
    pem = decodeURIComponent(text);
  } catch {
    // Not URL-encoded: read as it is.
  }
  const body = PEM_BODY.exec(pem)?.[1];
  if (body) return new Uint8Array(Buffer.from(body.replace(/\s+/g, ""), "base64"));
  throw new UnauthenticatedError(
    "client_certificate_invalid",
    "invalid client certificate",
    "the Client-Cert header is neither RFC 9440's :base64(DER): nor a URL-encoded PEM certificate",
  );
}
