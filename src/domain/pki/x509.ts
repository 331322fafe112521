import type * as X509 from "@peculiar/x509";

export type X509Module = typeof X509;

let loading: Promise<X509Module> | undefined;

/**
 * @peculiar/x509, loaded on first use: evaluating it and its ASN.1 schemas took ~80 ms of every start,
 * and only enrollment with a CSR, renewal and the CA use it. It decorates its ASN.1 classes with
 * reflect-metadata, which must be loaded first.
 */
export function loadX509(): Promise<X509Module> {
  loading ??= import("reflect-metadata").then(() => import("@peculiar/x509"));
  return loading;
}
