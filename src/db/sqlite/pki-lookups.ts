/**
 * The device-certificate reads of the device page and of certificate authentication, on SQLite: prepared
 * once per connection, shaped for the planner Bun ships (see prepared.ts).
 */
import { desc, eq, type Placeholder, sql } from "drizzle-orm";
import type { Db } from "../client";
import { deviceCertificates, devices } from "../schema";
import { LIMIT_ONE, preparedRead, unplanned } from "./prepared";

/**
 * The device's newest certificate, read from the end of device_certificates_device_idx (which holds the
 * id tie-breaker too, so no sort), with the device compared unplanned and a literal LIMIT 1 (see
 * prepared.ts): a device that renewed many times has as many rows. The device page shows it on
 * every read: prepared once per database.
 */
export function selectNewestCertificate(db: Db, deviceId: string | Placeholder) {
  return db
    .select()
    .from(deviceCertificates)
    .where(eq(deviceCertificates.deviceId, unplanned(deviceId)))
    .orderBy(desc(deviceCertificates.createdAt), desc(deviceCertificates.id))
    .limit(LIMIT_ONE);
}
const newestCertificate = preparedRead((db: Db) => selectNewestCertificate(db, sql.placeholder("deviceId")));

// Every request an agent makes with its certificate: prepared once per database. The device's columns
// come through scalar subqueries with qualified names: SQLite as Bun ships it prepares a join that binds
// a parameter again at every execution (see authenticate.ts).
const certificateHolderLookup = preparedRead((db: Db) => {
  const deviceColumn = (column: string) =>
    sql.raw(`(SELECT devices.${column} FROM devices WHERE devices.id = device_certificates.device_id)`);
  return db
    .select({
      certificate: {
        id: deviceCertificates.id,
        notBefore: deviceCertificates.notBefore,
        expiresAt: deviceCertificates.expiresAt,
        revokedAt: deviceCertificates.revokedAt,
      },
      device: {
        id: deviceColumn("id").mapWith(devices.id),
        organizationId: deviceColumn("organization_id").mapWith(devices.organizationId),
        status: deviceColumn("status").mapWith(devices.status),
      },
    })
    .from(deviceCertificates)
    .where(eq(deviceCertificates.fingerprint, sql.placeholder("fingerprint")));
});

/** The device's newest certificate, or undefined. */
export function lookUpNewestCertificate(db: Db, deviceId: string) {
  return newestCertificate(db).get({ deviceId });
}

/** The certificate with this fingerprint, with its device's id, organization and status. */
export function lookUpCertificateHolder(db: Db, fingerprint: string) {
  return certificateHolderLookup(db).get({ fingerprint });
}
