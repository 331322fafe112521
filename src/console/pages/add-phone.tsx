import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ErrorNotice, notify } from "../components/feedback";
import { Field } from "../components/form";
import { useEnrollmentChoices, userLabel } from "../components/integration-choices";
import { ChoiceSelect } from "../components/integration-enrollment-form";
import { PageHeader } from "../components/layout";
import { type KeyMadeBy, PhoneKeyChoice, PhoneTunnel, ProfileLinkQr } from "../components/phone-delivery";
import { type PhonePlatform, PhoneSupport } from "../components/phone-support";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { Link } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";

type PhoneEnrollment = Schemas["PhoneEnrollment"];

const FIELDS = ["device_name", "platform", "user_id", "policy_id", "public_key"];

/**
 * A phone without an agent (POST /devices/phones): an iPhone gets a signed profile through a one-time
 * link, an Android phone scans its tunnel in the WireGuard app. What either will enforce is said before.
 */
export function AddPhonePage(_: PageProps) {
  const mayWrite = can(useStore(sessionStore), "devices:write");
  const [added, setAdded] = useState<PhoneEnrollment | null>(null);
  return (
    <>
      <p class="small">
        <Link href="/devices">← Devices</Link>
      </p>
      <PageHeader
        title="Add a phone"
        description="An iPhone or Android phone joins without an agent: a VPN profile (iPhone) or a QR code (Android) for the WireGuard app."
      />
      {!mayWrite ? (
        <p>Adding a phone needs the devices:write permission: ask an administrator or operator.</p>
      ) : added ? (
        <PhoneAdded added={added} onAnother={() => setAdded(null)} />
      ) : (
        <AddPhoneForm
          onAdded={(answer) => {
            notify(`${answer.device.device_name} added`);
            setAdded(answer);
          }}
        />
      )}
    </>
  );
}

function AddPhoneForm({ onAdded }: { onAdded: (added: PhoneEnrollment) => void }) {
  const [name, setName] = useState("");
  const [platform, setPlatform] = useState<PhonePlatform>("ios");
  const [policyId, setPolicyId] = useState("");
  const [userId, setUserId] = useState("");
  const [keyMadeBy, setKeyMadeBy] = useState<KeyMadeBy>("server");
  const [publicKey, setPublicKey] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const { policies, users } = useEnrollmentChoices();

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      onAdded(
        await unwrap(
          api.POST("/api/v1/devices/phones", {
            body: {
              device_name: name,
              platform,
              ...(policyId ? { policy_id: policyId } : {}),
              ...(userId ? { user_id: userId } : {}),
              ...(keyMadeBy === "phone" ? { public_key: publicKey } : {}),
            },
          }),
        ),
      );
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card">
      <form onSubmit={submit} aria-labelledby="add-phone-title">
        <h2 id="add-phone-title">The phone</h2>
        <ErrorNotice error={formError(error, FIELDS)} title="The phone could not be added" />
        <Field label="Name" hint="How the device list shows it." error={fieldError(error, "device_name")}>
          {(control) => (
            <input
              {...control}
              required
              maxLength={200}
              value={name}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <fieldset>
          <legend>Platform</legend>
          <div class="checkbox">
            <input
              type="radio"
              id="phone-platform-ios"
              name="phone-platform"
              checked={platform === "ios"}
              aria-describedby="phone-platform-ios-hint"
              onChange={() => setPlatform("ios")}
            />
            <label for="phone-platform-ios">iPhone or iPad (iOS)</label>
            <p id="phone-platform-ios-hint" class="hint">
              A signed configuration profile, opened from a one-time link.
            </p>
          </div>
          <div class="checkbox">
            <input
              type="radio"
              id="phone-platform-android"
              name="phone-platform"
              checked={platform === "android"}
              aria-describedby="phone-platform-android-hint"
              onChange={() => setPlatform("android")}
            />
            <label for="phone-platform-android">Android</label>
            <p id="phone-platform-android-hint" class="hint">
              A QR code the WireGuard app scans.
            </p>
          </div>
        </fieldset>
        <div class="filters">
          <ChoiceSelect
            label="Policy (optional)"
            hint="What its profile carries (iPhone)."
            noun="policies"
            noneLabel="The organization default"
            choices={policies}
            value={policyId}
            error={fieldError(error, "policy_id")}
            optionLabel={(policy) => `${policy.name}${policy.is_default ? " (the default)" : ""}`}
            onChange={setPolicyId}
          />
          <ChoiceSelect
            label="User (optional)"
            hint="Whose phone it is."
            noun="users"
            noneLabel="Nobody"
            choices={users}
            value={userId}
            error={fieldError(error, "user_id")}
            optionLabel={userLabel}
            onChange={setUserId}
          />
        </div>
        <PhoneKeyChoice
          platform={platform}
          keyMadeBy={keyMadeBy}
          publicKey={publicKey}
          error={fieldError(error, "public_key")}
          onKeyMadeBy={setKeyMadeBy}
          onPublicKey={setPublicKey}
        />
        <PhoneSupport platform={platform} />
        <div class="button-row">
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Adding…" : "Add phone"}
          </button>
        </div>
      </form>
    </div>
  );
}

/** The phone just added: what to show its user so that it gets its tunnel (and, on an iPhone, its profile). */
function PhoneAdded({ added, onAnother }: { added: PhoneEnrollment; onAnother: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Focus the result: the next thing to do is to show it to the phone.
  useEffect(() => heading.current?.focus(), []);
  const { device, profile_link: link } = added;
  const platform: PhonePlatform = device.platform === "android" ? "android" : "ios";
  const keyMadeBy = device.vpn_profile?.key_made_by ?? "server";
  return (
    <section class="card" aria-labelledby="phone-added">
      <h2 id="phone-added" ref={heading} tabIndex={-1}>
        {device.device_name} added
      </h2>
      {platform === "ios" && link ? (
        <ProfileLinkQr link={link} deviceName={device.device_name} keyMadeBy={keyMadeBy} />
      ) : null}
      {platform === "android" || keyMadeBy === "phone" ? (
        <PhoneTunnel deviceId={device.id} deviceName={device.device_name} platform={platform} />
      ) : null}
      <PhoneSupport platform={platform} />
      <div class="button-row">
        <Link href={`/devices/${device.id}`} class="button">
          Open the device
        </Link>
        <button type="button" class="button-secondary" onClick={onAnother}>
          Add another phone
        </button>
      </div>
    </section>
  );
}
