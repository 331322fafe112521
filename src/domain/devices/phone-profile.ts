/**
 * The configuration profile (.mobileconfig) of an iPhone or iPad enrolled as a phone: the tunnel for the
 * WireGuard app, a passcode when the policy requires encryption, and the screenshot restriction, each
 * payload only when the policy asks for it and IOS_SUPPORT says a hand-installed profile can do it. Every
 * key is one of Apple's published profile schema (test/helpers/apple-profile-schema.ts checks them) or,
 * inside VendorConfig, of the WireGuard app's (wireguard-apple MOBILECONFIG.md).
 */
import { createHash } from "node:crypto";
import { formatPlist, type PlistValue } from "../../lib/plist";
import type { PolicyData } from "../policies/policy-document";

export interface IosProfileInput {
  organizationId: string;
  organizationName: string;
  deviceId: string;
  deviceName: string;
  policy: PolicyData;
  /** The tunnel as wg-quick text with its private key; null leaves the VPN payload out (the phone made its key). */
  wgQuick: string | null;
  /** `vpn.endpoint`: shown as the server in Settings, VPN. */
  endpoint: string;
}

/** The payload types a profile can hold, with what each is for (the console lists them). */
export interface IosPayloadSummary {
  type: "com.apple.vpn.managed" | "com.apple.mobiledevice.passwordpolicy" | "com.apple.applicationaccess";
  description: string;
}

/** A minimum passcode of six characters, as iOS itself asks for by default. */
const MIN_PASSCODE_LENGTH = 6;

/** The payloads the profile of `input` carries, and why. */
export function iosPayloads(input: Pick<IosProfileInput, "policy" | "wgQuick">): IosPayloadSummary[] {
  const payloads: IosPayloadSummary[] = [];
  if (input.wgQuick !== null)
    payloads.push({
      type: "com.apple.vpn.managed",
      description: input.policy.network.vpn_always_on
        ? "the tunnel for the WireGuard app, connected on demand with its switch locked"
        : input.policy.network.vpn_required
          ? "the tunnel for the WireGuard app, connected on demand"
          : "the tunnel for the WireGuard app",
    });
  if (input.policy.storage.encryption_required)
    payloads.push({
      type: "com.apple.mobiledevice.passwordpolicy",
      description: `a passcode of ${MIN_PASSCODE_LENGTH} characters or more (data protection encrypts with it)`,
    });
  if (!input.policy.dlp.screenshot_allowed)
    payloads.push({ type: "com.apple.applicationaccess", description: "no screenshots or screen recording" });
  return payloads;
}

/**
 * The unsigned profile (XML property list) and its payloads. Identifiers and UUIDs are derived from the
 * device, so a newer profile (a new key, a changed policy) replaces the installed one instead of adding
 * a second.
 */
export function iosProfile(input: IosProfileInput): { xml: string; payloads: IosPayloadSummary[] } {
  const base = `com.bulwark.${input.organizationId}.${input.deviceId}`;
  const common = (suffix: string, type: string, displayName: string) => ({
    PayloadType: type,
    PayloadVersion: 1,
    PayloadIdentifier: `${base}.${suffix}`,
    PayloadUUID: stableUuid(`${base}.${suffix}`),
    PayloadDisplayName: displayName,
  });
  const payloads = iosPayloads(input);
  const content: PlistValue[] = [];
  for (const payload of payloads) {
    if (payload.type === "com.apple.vpn.managed" && input.wgQuick !== null) {
      const onDemand = input.policy.network.vpn_required || input.policy.network.vpn_always_on;
      content.push({
        ...common("vpn", payload.type, "VPN"),
        UserDefinedName: `${input.organizationName} (Bulwark)`,
        VPNType: "VPN",
        VPNSubType: "com.wireguard.ios",
        VendorConfig: { WgQuickConfig: input.wgQuick },
        VPN: {
          RemoteAddress: input.endpoint,
          AuthenticationMethod: "Password",
          OnDemandEnabled: onDemand ? 1 : undefined,
          OnDemandRules: onDemand ? [{ Action: "Connect" }] : undefined,
          OnDemandUserOverrideDisabled: input.policy.network.vpn_always_on ? 1 : undefined,
        },
      });
    } else if (payload.type === "com.apple.mobiledevice.passwordpolicy") {
      content.push({
        ...common("passcode", payload.type, "Passcode"),
        forcePIN: true,
        allowSimple: false,
        minLength: MIN_PASSCODE_LENGTH,
      });
    } else if (payload.type === "com.apple.applicationaccess") {
      content.push({
        ...common("restrictions", payload.type, "Restrictions"),
        allowScreenShot: false,
      });
    }
  }
  const xml = formatPlist({
    PayloadType: "Configuration",
    PayloadVersion: 1,
    PayloadIdentifier: base,
    PayloadUUID: stableUuid(base),
    PayloadDisplayName: `${input.organizationName}: ${input.deviceName}`,
    PayloadOrganization: input.organizationName,
    PayloadDescription:
      "Installed by Bulwark for your organization. It " +
      (payloads.map((payload) => payload.description).join("; ") || "carries no settings") +
      ". Removing the profile removes them; your administrator sees only what the VPN server sees.",
    PayloadContent: content,
  });
  return { xml, payloads };
}

/** A UUID (version 8, name-based) from SHA-256 of `name`, in uppercase as Apple writes them. */
function stableUuid(name: string): string {
  const bytes = createHash("sha256").update(name).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex").toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
