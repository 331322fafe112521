import type { DomainDeps } from "../deps";
import { deviceCertificateView } from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceView, findDevice, toComplianceReport, toDeviceView } from "./device-views";
import type { ComplianceReport } from "./evaluate-compliance";

/** One device of the organization, with its compliance report and effective policy id. */
export function getDevice(deps: DomainDeps, organizationId: string, deviceId: string): DeviceView {
  const device = findDevice(deps.db, organizationId, deviceId);
  return toDeviceView(
    device,
    resolveEffectivePolicy(deps.db, organizationId, device.policyId).id,
    deviceCertificateView(deps.db, device.id),
  );
}

/** A device's compliance report as last evaluated. */
export function getDeviceCompliance(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): ComplianceReport {
  return toComplianceReport(findDevice(deps.db, organizationId, deviceId));
}
