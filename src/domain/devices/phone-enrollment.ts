/**
 * Phones without an agent: an iPhone or iPad gets a signed configuration profile, an Android phone a QR
 * code for the WireGuard app, and both join the VPN with the policy's settings a profile or the app can
 * carry (src/agent/enforce/phone-support.ts). An administrator adds the phone; its WireGuard key is made
 * by the server (the private half sealed, and erased once the phone has fetched its profile or after
 * PHONE_KEY_HOLD_SECONDS) or by the phone's WireGuard app (only the public half ever reaches the server:
 * the safer way). Nothing on such a phone reports back, so its compliance stays `unknown` and its status
 * `pending` (enrollment in progress) unless something real is seen.
 */
import { and, eq, gt, isNull, ne } from "drizzle-orm";
import { renderSVG } from "uqr";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { devices, organizations, phoneEnrollments, phoneProfileLinks } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { SecretBoxError } from "../../lib/secret-box";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { generateWireGuardKeyPair } from "../../lib/wireguard";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, NotFoundError, UnavailableError, ValidationError } from "../errors";
import { recordEvent } from "../events/record-event";
import { deviceCa } from "../pki/device-ca";
import { profileSigner } from "../pki/profile-signer";
import { signCms } from "../pki/sign-cms";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { findPolicyId } from "../policies/find-policy-id";
import type { PolicyData } from "../policies/policy-document";
import { findLiveUserId } from "../users/find-live-user-id";
import { devicePeerSettings, deviceVpnConfig } from "../vpn/device-vpn-config";
import { organizationAddressBlock, organizationVpnSubnet } from "../vpn/organization-subnets";
import { allocateVpnAddress } from "./allocate-vpn-address";
import { appendDeviceLog } from "./append-device-log";
import { describePublicKeyProblem } from "./check-public-key";
import { type DeviceRow, findDevice } from "./device-views";
import { selectPublicKeyHolder } from "./enroll-device";
import { insertDevice } from "./insert-device";
import { iosPayloads, iosProfile } from "./phone-profile";

/** Why a profile link does not work, for an unknown, used or expired one alike. */
export const LINK_GONE =
  "this link is unknown, already used or expired, or its phone is suspended: ask your administrator for a new one";

/** How long a key the server made is kept (sealed) for the phone to fetch: a day. */
export const PHONE_KEY_HOLD_SECONDS = 24 * 3600;
/** A one-time profile link lasts as long as the key it delivers is held. */
export const PROFILE_LINK_LIFETIME_SECONDS = PHONE_KEY_HOLD_SECONDS;
const PROFILE_LINK_PREFIX = "bwp_";
export const PHONE_PLATFORMS = ["ios", "android"] as const;
export type PhonePlatform = (typeof PHONE_PLATFORMS)[number];

/** What a device's view says of its phone enrollment (null for a device with an agent). */
export interface PhoneView {
  key_made_by: "server" | "phone";
  /** Until when the server still holds the private key it made; null when it holds none (any more). */
  key_held_until: string | null;
  profile_fetched_at: string | null;
  /** The payloads a profile made now would carry (iOS); empty for Android. */
  profile_payloads: { type: string; description: string }[];
  /** What the profile the phone fetched carried, and under which policy version; null before a fetch. */
  delivered: {
    policy_id: string;
    policy_version: number;
    payloads: { type: string; description: string }[];
  } | null;
  /** The phone's profile carries other settings than its policy now asks for: it needs a new profile. */
  profile_out_of_date: boolean;
}

export interface ProfileLink {
  url: string;
  expires_at: string;
}

export interface AddPhoneInput {
  deviceName: string;
  platform: PhonePlatform;
  userId?: string | null;
  policyId?: string | null;
  /** The public key the phone's WireGuard app made; absent: the server makes the pair. */
  publicKey?: string;
}

type PhoneRow = typeof phoneEnrollments.$inferSelect;

/** What a signed profile carries: its policy version and payloads. */
interface Delivered {
  policyId: string;
  policyVersion: number;
  payloads: { type: string; description: string }[];
}

/** The phone enrollment of a device, or null (an agent's device). */
export async function findPhoneEnrollment(db: DbOrTx, deviceId: string): Promise<PhoneRow | null> {
  return (
    (await firstRow(db.select().from(phoneEnrollments).where(eq(phoneEnrollments.deviceId, deviceId)))) ??
    null
  );
}

/** Whether the server still holds the private key it made (sealed, and its day not over). */
function isKeyHeld(row: PhoneRow, now: Date): boolean {
  return row.sealedPrivateKey !== null && row.keyHeldUntil !== null && row.keyHeldUntil > toIso(now);
}

/** The private key the server still holds for a phone, or null (made by the phone, fetched, or expired). */
function heldKey(deps: DomainDeps, row: PhoneRow, now: Date): string | null {
  if (row.sealedPrivateKey === null || !isKeyHeld(row, now)) return null;
  try {
    return deps.secrets.open(row.sealedPrivateKey);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new UnavailableError(
      "phone_key_unreadable",
      "the phone's key cannot be opened",
      "the sealed key cannot be opened with the key file beside the database (restored without it?): make a new key with POST /api/v1/devices/:id/vpn-key",
    );
  }
}

/** The device view's `vpn_profile`, policy-dependent payloads included. */
export async function phoneView(deps: DomainDeps, device: DeviceRow): Promise<PhoneView | null> {
  if (!(PHONE_PLATFORMS as readonly string[]).includes(device.platform)) return null;
  const row = await findPhoneEnrollment(deps.db, device.id);
  if (!row) return null;
  const held = isKeyHeld(row, deps.clock.now());
  const payloads =
    device.platform === "ios"
      ? iosPayloads({
          policy: (await resolveEffectivePolicy(deps.db, device.organizationId, device.policyId)).policyData,
          // The tunnel is in the profile when the server made the key (the phone's own key never is).
          wgQuick: row.keyMadeBy === "server" ? "" : null,
        })
      : [];
  const delivered =
    row.deliveredPolicyId !== null && row.deliveredPolicyVersion !== null && row.deliveredPayloads !== null
      ? {
          policy_id: row.deliveredPolicyId,
          policy_version: row.deliveredPolicyVersion,
          payloads: row.deliveredPayloads,
        }
      : null;
  return {
    key_made_by: row.keyMadeBy,
    key_held_until: held ? row.keyHeldUntil : null,
    profile_fetched_at: row.profileFetchedAt,
    profile_payloads: payloads,
    delivered,
    profile_out_of_date:
      delivered !== null && JSON.stringify(delivered.payloads) !== JSON.stringify(payloads),
  };
}

/**
 * Adds a phone: a device in `pending` with its VPN address and key, no agent and no device token. For
 * iOS, a one-time link to its profile comes with it. Audited (device.add_phone), logged and sent as
 * device.enrolled, as an agent's enrollment is.
 */
export async function addPhone(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: AddPhoneInput,
): Promise<{ deviceId: string; profileLink: ProfileLink | null }> {
  const keyProblem = input.publicKey === undefined ? undefined : describePublicKeyProblem(input.publicKey);
  if (keyProblem !== undefined)
    throw new ValidationError("invalid request body", [
      { field: "public_key", message: keyProblem, received: input.publicKey },
    ]);
  const name = input.deviceName.trim();
  if (name === "")
    throw new ValidationError("invalid request body", [
      { field: "device_name", message: "must not be blank", received: input.deviceName },
    ]);
  const keys = input.publicKey === undefined ? generateWireGuardKeyPair() : { publicKey: input.publicKey };
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const deviceId = newId();
  return await withTransaction(
    deps.db,
    async (tx) => {
      if (await firstRow(selectPublicKeyHolder(tx, keys.publicKey)))
        throw new ConflictError(
          "public_key_taken",
          "public key already in use",
          "another device holds this WireGuard public key; make a new key pair in the WireGuard app",
        );
      let userId: string | null = null;
      if (input.userId) {
        userId = (await findLiveUserId(tx, organizationId, input.userId.toLowerCase())) ?? null;
        if (!userId) throw new NotFoundError("user", `no user ${input.userId} in this organization`);
      }
      let policyId: string | null = null;
      if (input.policyId) {
        policyId = (await findPolicyId(tx, organizationId, input.policyId)) ?? null;
        if (!policyId) throw new NotFoundError("policy", `no policy ${input.policyId} in this organization`);
      }
      const policy = await resolveEffectivePolicy(deps.db, organizationId, policyId);
      const block = organizationAddressBlock(
        deps.config.vpn,
        await organizationVpnSubnet(tx, organizationId),
      );
      const address = await allocateVpnAddress(tx, block.range, block.subnet);
      const device = await insertDevice(
        tx,
        {
          id: deviceId,
          organizationId,
          userId,
          deviceName: name,
          platform: input.platform,
          agentVersion: "",
          osVersion: null,
          hardwareId: "",
          status: "pending",
          policyId,
          vpnAddress: address,
          vpnPublicKey: keys.publicKey,
          complianceStatus: "unknown",
          complianceViolations: [],
          complianceMissing: [],
          complianceCheckedAt: null,
        },
        timestamp,
      );
      const keyMadeBy = "privateKey" in keys ? "server" : "phone";
      await tx.insert(phoneEnrollments).values({
        deviceId,
        organizationId,
        keyMadeBy,
        sealedPrivateKey: "privateKey" in keys ? deps.secrets.seal(keys.privateKey) : null,
        keyHeldUntil: "privateKey" in keys ? toIso(addSeconds(now, PHONE_KEY_HOLD_SECONDS)) : null,
        profileFetchedAt: null,
        createdAt: timestamp,
      });
      const profileLink = input.platform === "ios" ? await insertProfileLink(deps, tx, device, now) : null;
      const details = { user_id: userId, policy_id: policy.id, via: "vpn_profile", key_made_by: keyMadeBy };
      await appendDeviceLog(tx, now, deviceId, "device.enrolled", details);
      await recordEvent(tx, now, organizationId, "device.enrolled", {
        device_id: deviceId,
        device_name: name,
        platform: input.platform,
        user_id: userId,
        policy_id: policy.id,
      });
      await recordAudit(tx, now, actor, {
        action: "device.add_phone",
        targetType: "device",
        targetId: deviceId,
        details: { ...details, platform: input.platform },
      });
      return { deviceId, profileLink };
    },
    { isolation: "read committed", retryUniqueViolations: true },
  );
}

/** A device of the organization that is a phone without an agent, with its enrollment. */
async function findPhone(
  db: DbOrTx,
  organizationId: string,
  deviceId: string,
): Promise<{ device: DeviceRow; phone: PhoneRow }> {
  const device = await findDevice(db, organizationId, deviceId);
  const phone = await findPhoneEnrollment(db, device.id);
  if (!phone)
    throw new ConflictError(
      "device_not_vpn_profile",
      "this device has an agent",
      "VPN profiles and QR codes are for phones added with POST /api/v1/devices/phones; an agent's configuration comes with its enrollment",
    );
  if (device.status === "wiped")
    throw new ConflictError("device_wiped", "device is wiped", "a wiped device has no tunnel");
  return { device, phone };
}

/** The phone's tunnel as wg-quick text, the private key in it when the server still holds it. */
async function phoneWgQuick(
  deps: DomainDeps,
  db: DbOrTx,
  device: DeviceRow,
  policy: PolicyData,
  privateKey: string | null,
): Promise<string> {
  const settings = await devicePeerSettings(
    deps,
    device,
    {
      organizationSubnet: await organizationVpnSubnet(db, device.organizationId),
      storedServerPublicKey: null,
    },
    policy,
  );
  return deviceVpnConfig(settings, privateKey ?? undefined).wg_quick;
}

/**
 * The phone's tunnel for the WireGuard app: the wg-quick text and its QR code (SVG). While the server
 * holds the key it made, both carry the private key; otherwise the text says where the phone's own key
 * goes, and the QR code is left out (it would be of no use to scan).
 */
export async function phoneVpnConfig(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<{ wg_quick: string; private_key_included: boolean; qr_svg: string | null }> {
  const { device, phone } = await findPhone(deps.db, organizationId, deviceId);
  const privateKey = heldKey(deps, phone, deps.clock.now());
  if (phone.keyMadeBy === "server" && privateKey === null)
    throw keyNotHeld(deviceId, phone.profileFetchedAt !== null);
  const policy = await resolveEffectivePolicy(deps.db, device.organizationId, device.policyId);
  const wgQuick = await phoneWgQuick(deps, deps.db, device, policy.policyData, privateKey);
  return {
    wg_quick: wgQuick,
    private_key_included: privateKey !== null,
    qr_svg: privateKey === null ? null : renderSVG(wgQuick, { border: 4 }),
  };
}

function keyNotHeld(deviceId: string, fetched: boolean): ConflictError {
  return new ConflictError(
    "vpn_key_not_held",
    "the server no longer holds this phone's private key",
    `${fetched ? "the phone fetched its profile, and the key was erased then" : "the key is kept for a day only"}: a new profile (a changed policy included) comes with a new key, POST /api/v1/devices/${deviceId}/vpn-key (the old key stops working); a profile without the tunnel would replace the installed one and take its tunnel away`,
  );
}

/** The organization's name, for the profile. */
async function organizationName(db: DbOrTx, organizationId: string): Promise<string> {
  const row = await firstRow(
    db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId)),
  );
  if (!row) throw new NotFoundError("organization");
  return row.name;
}

/** The signed profile (DER CMS) of an iOS phone and the name to save it as. */
async function signedProfile(
  deps: DomainDeps,
  db: DbOrTx,
  device: DeviceRow,
  privateKey: string | null,
  now: Date,
): Promise<{ body: Uint8Array<ArrayBuffer>; fileName: string; delivered: Delivered }> {
  const policy = await resolveEffectivePolicy(deps.db, device.organizationId, device.policyId);
  const name = await organizationName(db, device.organizationId);
  const wgQuick =
    privateKey === null ? null : await phoneWgQuick(deps, db, device, policy.policyData, privateKey);
  const profile = iosProfile({
    organizationId: device.organizationId,
    organizationName: name,
    deviceId: device.id,
    deviceName: device.deviceName,
    policy: policy.policyData,
    wgQuick,
    endpoint: deps.config.vpn.endpoint,
  });
  const signer = await profileSigner(deps, { id: device.organizationId, name }, now);
  return {
    body: await signCms(new TextEncoder().encode(profile.xml), signer, now),
    fileName: `${device.deviceName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "bulwark"}.mobileconfig`,
    delivered: {
      policyId: policy.id,
      policyVersion: policy.version,
      payloads: profile.payloads,
    },
  };
}

function requireIos(device: DeviceRow): void {
  if (device.platform !== "ios")
    throw new ConflictError(
      "profile_ios_only",
      "configuration profiles are for iOS",
      "an Android phone scans its QR code (GET /api/v1/devices/:id/vpn-config) in the WireGuard app",
    );
}

/**
 * The signed profile of an iOS phone, for an administrator: with the tunnel while the server holds the
 * key it made (the key stays held: only the phone's own fetch erases it), without it when the phone made
 * its key. Audited (device.profile_download): it may carry a private key.
 */
export async function adminPhoneProfile(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
): Promise<{ body: Uint8Array<ArrayBuffer>; fileName: string }> {
  const now = deps.clock.now();
  const { device, phone } = await findPhone(deps.db, organizationId, deviceId);
  requireIos(device);
  const privateKey = heldKey(deps, phone, now);
  if (phone.keyMadeBy === "server" && privateKey === null)
    throw keyNotHeld(device.id, phone.profileFetchedAt !== null);
  const profile = await signedProfile(deps, deps.db, device, privateKey, now);
  await withTransaction(deps.db, (tx) =>
    recordAudit(tx, now, actor, {
      action: "device.profile_download",
      targetType: "device",
      targetId: device.id,
      details: { private_key_included: privateKey !== null },
    }),
  );
  return profile;
}

async function insertProfileLink(
  deps: DomainDeps,
  tx: DbOrTx,
  device: DeviceRow,
  now: Date,
): Promise<ProfileLink> {
  const token = generateSecret(32, PROFILE_LINK_PREFIX);
  const expiresAt = toIso(addSeconds(now, PROFILE_LINK_LIFETIME_SECONDS));
  await tx.insert(phoneProfileLinks).values({
    id: newId(),
    deviceId: device.id,
    organizationId: device.organizationId,
    tokenHash: hashSecret(token),
    expiresAt,
    usedAt: null,
    createdAt: toIso(now),
  });
  return {
    url: `${deps.config.server.base_url.replace(/\/$/, "")}/api/v1/phone-profiles/${token}`,
    expires_at: expiresAt,
  };
}

/**
 * A new one-time link to an iOS phone's profile (the earlier unused ones stop working). 409 when the
 * server made the key and holds it no more: a new key comes first.
 */
export async function createProfileLink(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
): Promise<ProfileLink> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const { device, phone } = await findPhone(tx, organizationId, deviceId);
    requireIos(device);
    if (device.status === "suspended")
      throw new ConflictError(
        "device_suspended",
        "device is suspended",
        "a suspended phone's link would not open: unsuspend it first",
      );
    if (phone.keyMadeBy === "server" && heldKey(deps, phone, now) === null)
      throw keyNotHeld(device.id, phone.profileFetchedAt !== null);
    await retireUnusedLinks(tx, device.id, now);
    const link = await insertProfileLink(deps, tx, device, now);
    await recordAudit(tx, now, actor, {
      action: "device.profile_link",
      targetType: "device",
      targetId: device.id,
      details: { expires_at: link.expires_at },
    });
    return link;
  });
}

async function retireUnusedLinks(tx: DbOrTx, deviceId: string, now: Date): Promise<void> {
  await tx
    .update(phoneProfileLinks)
    .set({ usedAt: toIso(now) })
    .where(and(eq(phoneProfileLinks.deviceId, deviceId), isNull(phoneProfileLinks.usedAt)));
}

/** The link of a token's hash, unless it was used or has expired at `timestamp`. */
async function usableLink(db: DbOrTx, tokenHash: string, timestamp: string) {
  return await firstRow(
    db
      .select()
      .from(phoneProfileLinks)
      .where(
        and(
          eq(phoneProfileLinks.tokenHash, tokenHash),
          isNull(phoneProfileLinks.usedAt),
          gt(phoneProfileLinks.expiresAt, timestamp),
        ),
      ),
  );
}

/** A suspended or wiped phone's links do not open: its tunnel would not come up. */
function opensLinks(device: DeviceRow): boolean {
  return device.status !== "wiped" && device.status !== "suspended";
}

/**
 * What a one-time link's page shows before anything is used up: the phone's and the organization's
 * names while the link still works, else null. Reads only: a link checker or a chat's preview that
 * opens the link changes nothing.
 */
export async function peekProfileLink(
  deps: DomainDeps,
  token: string,
): Promise<{ deviceName: string; organizationName: string; expiresAt: string } | null> {
  const link = await usableLink(deps.db, hashSecret(token), toIso(deps.clock.now()));
  if (!link) return null;
  const device = await findDevice(deps.db, link.organizationId, link.deviceId).catch(() => null);
  if (!device || !opensLinks(device)) return null;
  return {
    deviceName: device.deviceName,
    organizationName: await organizationName(deps.db, link.organizationId),
    expiresAt: link.expiresAt,
  };
}

/**
 * The profile behind a one-time link, for the phone that opens it: the link is used up, and the key the
 * server made is erased once the profile carrying it is out. Unknown, used and expired links, and those
 * of a suspended or wiped phone, all answer 404 alike.
 */
export async function fetchProfileByLink(
  deps: DomainDeps,
  token: string,
  ip: string | null,
): Promise<{ body: Uint8Array<ArrayBuffer>; fileName: string }> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const tokenHash = hashSecret(token);
  const notFound = new NotFoundError("profile link", LINK_GONE);
  const known = await usableLink(deps.db, tokenHash, timestamp);
  if (!known) throw notFound;
  // The organization's CA is made (on first use) in a transaction of its own, before this one signs.
  await deviceCa(deps, known.organizationId);
  return await withTransaction(deps.db, async (tx) => {
    // Read again inside: another request may have used it meanwhile.
    const link = await usableLink(tx, tokenHash, timestamp);
    if (!link) throw notFound;
    const device = await findDevice(tx, link.organizationId, link.deviceId);
    const phone = await findPhoneEnrollment(tx, device.id);
    if (!phone || !opensLinks(device)) throw notFound;
    const privateKey = heldKey(deps, phone, now);
    if (phone.keyMadeBy === "server" && privateKey === null) throw notFound;
    const used = await tx
      .update(phoneProfileLinks)
      .set({ usedAt: timestamp })
      .where(and(eq(phoneProfileLinks.id, link.id), isNull(phoneProfileLinks.usedAt)))
      .returning({ id: phoneProfileLinks.id });
    if (used.length === 0) throw notFound; // another request used it first
    const profile = await signedProfile(deps, tx, device, privateKey, now);
    await tx
      .update(phoneEnrollments)
      .set({
        sealedPrivateKey: null,
        keyHeldUntil: null,
        profileFetchedAt: timestamp,
        deliveredPolicyId: profile.delivered.policyId,
        deliveredPolicyVersion: profile.delivered.policyVersion,
        deliveredPayloads: profile.delivered.payloads,
      })
      .where(eq(phoneEnrollments.deviceId, device.id));
    await appendDeviceLog(tx, now, device.id, "device.profile_fetched", {
      private_key_included: privateKey !== null,
      ip,
    });
    await recordAudit(
      tx,
      now,
      { type: "anonymous", id: null, label: null, organizationId: device.organizationId, ip },
      {
        action: "device.profile_fetch",
        targetType: "device",
        targetId: device.id,
        details: { link_id: link.id, private_key_included: privateKey !== null },
      },
    );
    return profile;
  });
}

/**
 * A new WireGuard key for a phone (lost profile, key not held any more, or a suspicion): made by the
 * server, or the public key the phone's app made. The old key leaves the VPN's peers at once; unused
 * profile links stop working, and an iOS phone gets a new one.
 */
export async function rotatePhoneKey(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  input: { publicKey?: string },
): Promise<{ profileLink: ProfileLink | null }> {
  const keyProblem = input.publicKey === undefined ? undefined : describePublicKeyProblem(input.publicKey);
  if (keyProblem !== undefined)
    throw new ValidationError("invalid request body", [
      { field: "public_key", message: keyProblem, received: input.publicKey },
    ]);
  const keys = input.publicKey === undefined ? generateWireGuardKeyPair() : { publicKey: input.publicKey };
  const now = deps.clock.now();
  return await withTransaction(
    deps.db,
    async (tx) => {
      const { device } = await findPhone(tx, organizationId, deviceId);
      const holder = await firstRow(selectPublicKeyHolder(tx, keys.publicKey));
      if (holder?.id === device.id)
        throw new ConflictError(
          "public_key_taken",
          "this is already the phone's key",
          "a new key must differ from the current one: make a new key pair in the WireGuard app",
        );
      if (holder)
        throw new ConflictError(
          "public_key_taken",
          "public key already in use",
          "another device holds this WireGuard public key; make a new key pair in the WireGuard app",
        );
      await tx
        .update(devices)
        .set({ vpnPublicKey: keys.publicKey, updatedAt: toIso(now) })
        .where(and(eq(devices.id, device.id), ne(devices.status, "wiped")));
      const keyMadeBy = "privateKey" in keys ? "server" : "phone";
      await tx
        .update(phoneEnrollments)
        .set({
          keyMadeBy,
          sealedPrivateKey: "privateKey" in keys ? deps.secrets.seal(keys.privateKey) : null,
          keyHeldUntil: "privateKey" in keys ? toIso(addSeconds(now, PHONE_KEY_HOLD_SECONDS)) : null,
          profileFetchedAt: null,
        })
        .where(eq(phoneEnrollments.deviceId, device.id));
      await retireUnusedLinks(tx, device.id, now);
      const profileLink = device.platform === "ios" ? await insertProfileLink(deps, tx, device, now) : null;
      const details = { key_made_by: keyMadeBy, public_key: keys.publicKey };
      await appendDeviceLog(tx, now, device.id, "device.vpn_key_replaced", details);
      await recordAudit(tx, now, actor, {
        action: "device.vpn_key",
        targetType: "device",
        targetId: device.id,
        details,
      });
      return { profileLink };
    },
    { isolation: "read committed", retryUniqueViolations: true },
  );
}
