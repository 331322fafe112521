import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { devices } from "./devices";
import { organizations } from "./identity";

/**
 * Key pairs the server itself holds, by name ("wireguard": the VPN server's X25519 pair). The private key
 * is sealed with `<database>.key`, like the TOTP secrets.
 */
export const serverKeys = sqliteTable("server_keys", {
  name: text("name").primaryKey(),
  publicKey: text("public_key").notNull(),
  sealedPrivateKey: text("sealed_private_key").notNull(),
  createdAt: text("created_at").notNull(),
});

/** Each organization's device CA (ECDSA P-256): its certificate and its sealed PKCS#8 private key. */
export const deviceCas = sqliteTable("device_cas", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  certificatePem: text("certificate_pem").notNull(),
  sealedPrivateKey: text("sealed_private_key").notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * Every certificate issued to a device. A presented certificate is recognised by the SHA-256 of its DER
 * bytes: only what this server issued, and did not revoke, authenticates.
 */
export const deviceCertificates = sqliteTable(
  "device_certificates",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    /** Hexadecimal, lowercase, as `openssl x509 -serial` prints it (there in uppercase). */
    serial: text("serial").notNull(),
    fingerprint: text("fingerprint").notNull(),
    notBefore: text("not_before").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    /** renewed, suspended, wiped */
    revokedReason: text("revoked_reason"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    uniqueIndex("device_certificates_fingerprint_unique").on(table.fingerprint),
    // The device's newest certificate (created_at, then id) read from the index end: no sort per read.
    index("device_certificates_device_idx").on(table.deviceId, table.createdAt, table.id),
  ],
);
