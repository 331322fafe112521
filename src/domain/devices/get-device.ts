import { desc, eq } from "drizzle-orm";
import { wipes } from "../../db/schema";
import type { DomainDeps } from "../deps";
import { deviceCertificateView } from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";
import { toWipeView } from "./wipe-view";

/** One device of the organization, with its compliance report and effective policy id. */
export function getDevice(deps: DomainDeps, organizationId: string, deviceId: string): DeviceView {
  const device = findDevice(deps.db, organizationId, deviceId);
  return toDeviceView(
    device,
    resolveEffectivePolicy(deps.db, organizationId, device.policyId).id,
    deviceCertificateView(deps.db, device.id),
    latestWipe(deps, device.id),
  );
}

/** The device's newest wipe request: a console reloaded while one is pending keeps following it. */
function latestWipe(deps: DomainDeps, deviceId: string) {
  const row = deps.db
    .select()
    .from(wipes)
    .where(eq(wipes.deviceId, deviceId))
    .orderBy(desc(wipes.initiatedAt))
    .limit(1)
    .get();
  return row ? toWipeView(row) : null;
}

/** A device's compliance report as last evaluated. */
export function getDeviceCompliance(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): ComplianceReport {
  return toComplianceReport(findDevice(deps.db, organizationId, deviceId));
}
