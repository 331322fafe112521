import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatDateTime } from "../lib/format";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";
import { type KeyMadeBy, PhoneKeyChoice, PhoneTunnel, ProfileLinkQr } from "./phone-delivery";
import type { PhonePlatform } from "./phone-support";
import { StatusBadge } from "./status";

type Device = Schemas["Device"];
type VpnProfile = NonNullable<Device["vpn_profile"]>;
type ProfileLink = NonNullable<Schemas["ProfileLink"]>;

/** What the card shows under its buttons: a new link's QR code, or the tunnel's. */
type Shown = { kind: "link"; link: ProfileLink } | { kind: "tunnel" } | null;

/** The badge of a phone without an agent, beside its status. */
export function VpnProfileOnlyBadge() {
  return <StatusBadge value="vpn_profile" label="VPN profile only" />;
}

/**
 * Whether the phone can still be given its tunnel without a new key: its own key needs nothing from the
 * server; the server's key only while the server still holds it.
 */
function canDeliver(profile: VpnProfile, now = Date.now()): boolean {
  if (profile.key_made_by === "phone") return true;
  return profile.key_held_until !== null && new Date(profile.key_held_until).getTime() > now;
}

function keyStateText(profile: VpnProfile): string {
  if (profile.key_made_by === "phone") return "Never held: the private key is the phone's own";
  if (profile.key_held_until && canDeliver(profile))
    return `Held, sealed, until ${formatDateTime(profile.key_held_until)} or until the phone fetches its profile`;
  return "Erased: make a new key to give the phone its tunnel again";
}

/** Saves a file the API answered (a blob) under `fileName`, as a download link would. */
function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = fileName;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * A phone managed through its VPN profile (no agent): its key's state, what its profile carries, and the
 * ways to give it its tunnel again (a new link, the QR code, the profile, a new key).
 */
export function DevicePhoneProfile({
  device,
  profile,
  mayWrite,
  onChanged,
}: {
  device: Device;
  profile: VpnProfile;
  mayWrite: boolean;
  onChanged: () => void;
}) {
  const platform: PhonePlatform = device.platform === "android" ? "android" : "ios";
  const [shown, setShown] = useState<Shown>(null);
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const [isNewKeyOpen, setNewKeyOpen] = useState(false);
  const isDeliverable = canDeliver(profile);
  const mayAct = mayWrite && device.status !== "wiped";

  const run = async (action: () => Promise<void>) => {
    setError(undefined);
    setBusy(true);
    try {
      await action();
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };
  const newLink = () =>
    run(async () => {
      const link = await unwrap(
        api.POST("/api/v1/devices/{id}/profile-link", { params: { path: { id: device.id } } }),
      );
      if (link) setShown({ kind: "link", link });
      notify("New profile link made: the previous one no longer works");
    });
  const download = () =>
    run(async () => {
      const call = api.GET("/api/v1/devices/{id}/profile", {
        params: { path: { id: device.id } },
        parseAs: "blob",
      });
      const blob = await unwrap(call);
      const disposition = (await call).response.headers.get("content-disposition") ?? "";
      const fileName = /filename="([^"]+)"/.exec(disposition)?.[1] ?? "bulwark.mobileconfig";
      saveFile(blob, fileName);
    });

  return (
    <section class="card" aria-labelledby="vpn-profile-title">
      <h2 id="vpn-profile-title">VPN profile</h2>
      <p>
        <VpnProfileOnlyBadge /> No agent runs on this phone and nothing on it reports back, so its compliance
        is unknown. It cannot be wiped remotely: suspend it to cut its tunnel, then retire it.
      </p>
      <dl class="details">
        <dt>Key made by</dt>
        <dd>{profile.key_made_by === "server" ? "The server" : "The phone's WireGuard app"}</dd>
        <dt>Server's copy of the private key</dt>
        <dd>{keyStateText(profile)}</dd>
        <dt>Profile fetched</dt>
        <dd>
          {platform === "android"
            ? "no profile on Android: the WireGuard app scans the tunnel's QR code"
            : profile.profile_fetched_at
              ? `${formatDateTime(profile.profile_fetched_at)}, through its one-time link`
              : "not yet"}
        </dd>
      </dl>
      {platform === "ios" && profile.delivered ? (
        <>
          <h3>What the installed profile carries</h3>
          <p>
            As fetched, under version {profile.delivered.policy_version} of its policy
            {profile.profile_out_of_date
              ? ". Out of date: the policy now asks for other settings, listed below. A new profile comes with a new key (New key…)."
              : "."}
          </p>
          <PayloadList payloads={profile.delivered.payloads} />
        </>
      ) : null}
      {platform === "ios" && (!profile.delivered || profile.profile_out_of_date) ? (
        <>
          <h3>{profile.delivered ? "What a new profile would carry" : "What the profile carries"}</h3>
          <PayloadList payloads={profile.profile_payloads} />
        </>
      ) : null}
      {mayAct ? (
        <>
          <div class="button-row">
            {platform === "ios" && isDeliverable ? (
              <>
                <button type="button" class="button-secondary" disabled={isBusy} onClick={newLink}>
                  New profile link
                </button>
                <button type="button" class="button-secondary" disabled={isBusy} onClick={download}>
                  Download profile
                </button>
              </>
            ) : null}
            {platform === "android" && isDeliverable ? (
              <button
                type="button"
                class="button-secondary"
                aria-expanded={shown?.kind === "tunnel"}
                onClick={() => setShown(shown?.kind === "tunnel" ? null : { kind: "tunnel" })}
              >
                {profile.key_made_by === "server" ? "Show QR code" : "Show the tunnel's settings"}
              </button>
            ) : null}
            <button
              type="button"
              class="button-secondary"
              onClick={() => {
                setError(undefined);
                setNewKeyOpen(true);
              }}
            >
              New key…
            </button>
          </div>
          {isDeliverable ? null : (
            <p class="small">
              The server no longer holds this phone's private key: a new key gives it a new{" "}
              {platform === "ios" ? "profile link" : "QR code"}.
            </p>
          )}
          <ErrorNotice error={error} />
          {shown?.kind === "link" ? (
            <ProfileLinkQr
              link={shown.link}
              deviceName={device.device_name}
              keyMadeBy={profile.key_made_by}
            />
          ) : null}
          {shown?.kind === "tunnel" ? (
            <PhoneTunnel
              key={device.vpn_public_key}
              deviceId={device.id}
              deviceName={device.device_name}
              platform={platform}
            />
          ) : null}
          {isNewKeyOpen ? (
            <NewKeyDialog
              device={device}
              platform={platform}
              onClose={() => setNewKeyOpen(false)}
              onDone={(answer) => {
                setNewKeyOpen(false);
                const madeBy = answer.device.vpn_profile?.key_made_by;
                if (answer.profile_link) setShown({ kind: "link", link: answer.profile_link });
                else setShown(platform === "android" && madeBy === "server" ? { kind: "tunnel" } : null);
                onChanged();
              }}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** A new key pair: the old key leaves the VPN at once and unused links stop working. */
function NewKeyDialog({
  device,
  platform,
  onClose,
  onDone,
}: {
  device: Device;
  platform: PhonePlatform;
  onClose: () => void;
  onDone: (answer: Schemas["PhoneEnrollment"]) => void;
}) {
  const [keyMadeBy, setKeyMadeBy] = useState<KeyMadeBy>("server");
  const [publicKey, setPublicKey] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const submit = async () => {
    setError(undefined);
    try {
      const answer = await unwrap(
        api.POST("/api/v1/devices/{id}/vpn-key", {
          params: { path: { id: device.id } },
          body: keyMadeBy === "phone" ? { public_key: publicKey } : {},
        }),
      );
      notify(`${device.device_name} has a new key: the old one is out of the VPN`);
      onDone(answer);
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`New key for ${device.device_name}`}
      open
      confirmLabel="Make the new key"
      onConfirm={submit}
      onClose={onClose}
    >
      <p>
        The current key leaves the VPN at once: the phone has no tunnel until it gets the new one
        {platform === "ios" ? " from a new profile link" : " from a new QR code"}.
      </p>
      <ErrorNotice error={formError(error, ["public_key"])} />
      <PhoneKeyChoice
        platform={platform}
        keyMadeBy={keyMadeBy}
        publicKey={publicKey}
        error={fieldError(error, "public_key")}
        onKeyMadeBy={setKeyMadeBy}
        onPublicKey={setPublicKey}
      />
    </ConfirmDialog>
  );
}

function PayloadList({ payloads }: { payloads: { type: string; description: string }[] }) {
  if (payloads.length === 0) return <p>Nothing under its policy and key.</p>;
  return (
    <ul class="payload-list">
      {payloads.map((payload) => (
        <li key={payload.type}>
          <code>{payload.type}</code>: {payload.description}
        </li>
      ))}
    </ul>
  );
}
