import { lookUpDevicePage } from "../../db/lookups";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { deviceCertificateView } from "../pki/device-certificates";
import { missingPolicyError } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";
import { phoneView } from "./phone-enrollment";
import { toWipeView } from "./wipe-view";

/** One device of the organization, with its compliance report and effective policy id. */
export async function getDevice(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<DeviceView> {
  const page = await lookUpDevicePage(deps.db, organizationId, deviceId.toLowerCase());
  if (!page) throw new NotFoundError("device");
  const { device, latestWipe, certificate, effectivePolicyId } = page;
  if (effectivePolicyId === null) throw missingPolicyError(device.policyId);
  return toDeviceView(
    device,
    effectivePolicyId,
    deviceCertificateView(certificate),
    latestWipe ? toWipeView(latestWipe) : null,
    await phoneView(deps, device),
  );
}

/** A device's compliance report as last evaluated. */
export async function getDeviceCompliance(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<ComplianceReport> {
  return toComplianceReport(await findDevice(deps.db, organizationId, deviceId));
}
