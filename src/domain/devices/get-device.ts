import { readTogether } from "../../db/client";
import { lookUpDevice, lookUpLatestWipe } from "../../db/sqlite/device-lookups";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { deviceCertificateView } from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";
import { toWipeView } from "./wipe-view";

/** One device of the organization, with its compliance report and effective policy id. */
export function getDevice(deps: DomainDeps, organizationId: string, deviceId: string): DeviceView {
  return readTogether(deps.db, () => {
    const device = lookUpDevice(deps.db, organizationId, deviceId.toLowerCase());
    if (!device) throw new NotFoundError("device");
    const wipe = lookUpLatestWipe(deps.db, device.id);
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
