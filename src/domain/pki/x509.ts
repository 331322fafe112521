// @peculiar/x509 decorates its ASN.1 classes with reflect-metadata, which must be loaded first.
import "reflect-metadata";

export * as x509 from "@peculiar/x509";
