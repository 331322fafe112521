import { useId } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import { formatDateTime } from "../lib/format";
import { useApi } from "../lib/use-api";
import { CopyField } from "./copy";
import { ErrorNotice, Loading } from "./feedback";
import { Field } from "./form";
import type { PhonePlatform } from "./phone-support";
import { QrCode } from "./qr-code";

type ProfileLink = NonNullable<Schemas["ProfileLink"]>;
export type KeyMadeBy = "server" | "phone";

/** A WireGuard public key as the app shows it: 32 bytes in base64, 44 characters ending in "=". */
const PUBLIC_KEY_PATTERN = "[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=";

/**
 * Who makes the tunnel's key pair: the server (nothing to type, but it holds the private key until the
 * phone takes it), or the phone's WireGuard app (its public key pasted here; the private key never leaves
 * the phone).
 */
export function PhoneKeyChoice({
  platform,
  keyMadeBy,
  publicKey,
  error,
  onKeyMadeBy,
  onPublicKey,
}: {
  platform: PhonePlatform;
  keyMadeBy: KeyMadeBy;
  publicKey: string;
  error: string | undefined;
  onKeyMadeBy: (choice: KeyMadeBy) => void;
  onPublicKey: (key: string) => void;
}) {
  const id = useId();
  const carrier = platform === "ios" ? "The profile" : "The QR code";
  return (
    <fieldset>
      <legend>The tunnel's key</legend>
      <p class="hint">
        The phone's own key is the safer way: its private key never leaves the phone, while a key the server
        makes is kept on the server, sealed, until the phone fetches it (a day at most).
      </p>
      <div class="checkbox">
        <input
          type="radio"
          id={`${id}-server`}
          name={`${id}-key`}
          checked={keyMadeBy === "server"}
          aria-describedby={`${id}-server-hint`}
          onChange={() => onKeyMadeBy("server")}
        />
        <label for={`${id}-server`}>The server makes it</label>
        <p id={`${id}-server-hint`} class="hint">
          {carrier} carries the whole tunnel, private key included: nothing to type on the phone.
        </p>
      </div>
      <div class="checkbox">
        <input
          type="radio"
          id={`${id}-phone`}
          name={`${id}-key`}
          checked={keyMadeBy === "phone"}
          aria-describedby={`${id}-phone-hint`}
          onChange={() => onKeyMadeBy("phone")}
        />
        <label for={`${id}-phone`}>The phone's WireGuard app made it</label>
        <p id={`${id}-phone-hint`} class="hint">
          {carrier === "The profile"
            ? "The profile then carries no tunnel: the user adds the server's settings in the WireGuard app."
            : "There is then no QR code: the user adds the server's settings in the WireGuard app."}
        </p>
      </div>
      {keyMadeBy === "phone" ? (
        <Field
          label="Public key from the WireGuard app"
          hint="In the app: + → Create from scratch → Generate keypair, then copy the public key (44 characters)."
          error={error}
        >
          {(control) => (
            <input
              {...control}
              required
              pattern={PUBLIC_KEY_PATTERN}
              autoComplete="off"
              spellcheck={false}
              class="code"
              value={publicKey}
              onInput={(event) => onPublicKey(event.currentTarget.value.trim())}
            />
          )}
        </Field>
      ) : null}
    </fieldset>
  );
}

/** An iPhone's one-time link to its profile, as a QR code for the camera, with the link and its expiry. */
export function ProfileLinkQr({
  link,
  deviceName,
  keyMadeBy,
}: {
  link: ProfileLink;
  deviceName: string;
  keyMadeBy: KeyMadeBy;
}) {
  return (
    <div class="phone-delivery">
      <QrCode text={link.url} alt={`QR code of the one-time link to the profile of ${deviceName}`} />
      <div class="stack">
        <p>
          On the iPhone, point the Camera at this code and open the link: Safari downloads the profile. Then
          Settings → General → VPN &amp; Device Management → install it.
        </p>
        <CopyField label="One-time link" value={link.url} />
        <p class="small">
          It works once, until {formatDateTime(link.expires_at)}.{" "}
          {keyMadeBy === "server"
            ? "Whoever opens it gets the tunnel's private key: show it only to the phone's user."
            : "The profile carries no private key."}
        </p>
      </div>
    </div>
  );
}

/**
 * The tunnel as the WireGuard app takes it (GET /devices/:id/vpn-config): the QR code to scan while the
 * server holds the key it made, else the settings to type in, the private key being the phone's.
 */
export function PhoneTunnel({
  deviceId,
  deviceName,
  platform,
}: {
  deviceId: string;
  deviceName: string;
  platform: PhonePlatform;
}) {
  const config = useApi(
    () => unwrap(api.GET("/api/v1/devices/{id}/vpn-config", { params: { path: { id: deviceId } } })),
    [deviceId],
  );
  if (config.isLoading && !config.data) return <Loading label="Loading the tunnel" />;
  if (!config.data) return <ErrorNotice error={config.error} title="The tunnel could not be loaded" />;
  const { qr_svg: qrSvg, wg_quick: wgQuick } = config.data;
  if (qrSvg && platform === "android") {
    return (
      <div class="phone-delivery">
        <QrCode svg={qrSvg} alt={`QR code of the WireGuard tunnel of ${deviceName}`} />
        <div class="stack">
          <p>
            On the phone: <strong>WireGuard app → + → Scan from QR code</strong>, then name the tunnel and
            turn it on.
          </p>
          <p class="small">
            The code carries the tunnel's private key: show it only to the phone's user, and don't send a
            picture of it.
          </p>
        </div>
      </div>
    );
  }
  return (
    <CopyField
      label={
        config.data.private_key_included
          ? "The tunnel for the WireGuard app"
          : "The server's settings, for the WireGuard app (the private key is the phone's)"
      }
      value={wgQuick}
      isCode
    />
  );
}
