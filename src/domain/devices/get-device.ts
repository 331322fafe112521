import { and, desc, eq, type Placeholder, sql } from "drizzle-orm";
import { type Db, readTogether } from "../../db/client";
import { LIMIT_ONE, preparedRead, unplanned } from "../../db/prepared";
import { devices, wipes } from "../../db/schema";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { deviceCertificateView } from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";
import { toWipeView } from "./wipe-view";

// The device page's reads, prepared once per database: a fleet's dashboards and scripts call it most.
const deviceQuery = preparedRead((db: Db) =>
  db
    .select()
    .from(devices)
    .where(
      and(
        eq(devices.id, sql.placeholder("id")),
        eq(devices.organizationId, sql.placeholder("organizationId")),
      ),
    ),
);
/**
 * The device's newest wipe request: a console reloaded while one is pending keeps following it. Read
 * from the end of wipes_device_initiated_idx (a sort here cost more than the rest of the read), with
 * the device compared unplanned and a literal LIMIT 1 (see db/prepared.ts).
 */
export function selectLatestWipe(db: Db, deviceId: string | Placeholder) {
  return db
    .select()
    .from(wipes)
    .where(eq(wipes.deviceId, unplanned(deviceId)))
    .orderBy(desc(wipes.initiatedAt))
    .limit(LIMIT_ONE);
}
const latestWipeQuery = preparedRead((db: Db) => selectLatestWipe(db, sql.placeholder("deviceId")));

/** One device of the organization, with its compliance report and effective policy id. */
export function getDevice(deps: DomainDeps, organizationId: string, deviceId: string): DeviceView {
  return readTogether(deps.db, () => {
    const device = deviceQuery(deps.db).get({ id: deviceId.toLowerCase(), organizationId });
    if (!device) throw new NotFoundError("device");
    const wipe = latestWipeQuery(deps.db).get({ deviceId: device.id });
    return toDeviceView(
      device,
      resolveEffectivePolicy(deps.db, organizationId, device.policyId).id,
      deviceCertificateView(deps.db, device.id),
      wipe ? toWipeView(wipe) : null,
    );
  });
}

/** A device's compliance report as last evaluated. */
export async function getDeviceCompliance(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<ComplianceReport> {
  return toComplianceReport(await findDevice(deps.db, organizationId, deviceId));
}
