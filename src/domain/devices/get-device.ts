import { lookUpDevice, lookUpLatestWipe, readConsistently } from "../../db/lookups";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { deviceCertificateView } from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";
import { toWipeView } from "./wipe-view";

/** One device of the organization, with its compliance report and effective policy id. */
export async function getDevice(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<DeviceView> {
  return await readConsistently(deps.db, async () => {
    const device = await lookUpDevice(deps.db, organizationId, deviceId.toLowerCase());
    if (!device) throw new NotFoundError("device");
    const wipe = await lookUpLatestWipe(deps.db, device.id);
    return toDeviceView(
      device,
      (await resolveEffectivePolicy(deps.db, organizationId, device.policyId)).id,
      await deviceCertificateView(deps.db, device.id),
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
