import { useEffect, useState } from "preact/hooks";
import { type ApiError, api, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatDateTime } from "../lib/format";
import { Link } from "../lib/router";
import { useApi } from "../lib/use-api";
import { DevicePolicySelect, FOLLOW_DEFAULT, policyIdOf } from "./device-policy-select";
import { ErrorNotice, Loading, notify } from "./feedback";

const yesNo = (value: boolean) => (value ? "Allowed" : "Not allowed");

/**
 * The policy the device follows (its own, or the organization default), whether the agent applied its
 * current version, and, for those who may, a control to give it another.
 */
export function DevicePolicy({
  deviceId,
  mayChange,
  onChanged,
}: {
  deviceId: string;
  /** devices:write and policies:read, and the device is not wiped. */
  mayChange: boolean;
  /** Compliance is evaluated again at once: the page reloads the device. */
  onChanged: () => void;
}) {
  const policy = useApi(
    () => unwrap(api.GET("/api/v1/devices/{id}/policy", { params: { path: { id: deviceId } } })),
    [deviceId],
  );
  const data = policy.data;
  return (
    <section class="card" aria-labelledby="policy-title">
      <h2 id="policy-title">Policy</h2>
      <ErrorNotice error={policy.error} title="The device's policy could not be loaded" />
      {data ? (
        <div class="stack">
          <dl class="details">
            <dt>Policy</dt>
            <dd>
              <Link href={`/policies/${data.policy_id}`}>{data.name}</Link>{" "}
              <span class="muted small">
                {data.assignment === "default" ? "(the organization default)" : "(assigned to this device)"}
              </span>
            </dd>
            <dt>Current version</dt>
            <dd>{data.version}</dd>
            <dt>Applied by the agent</dt>
            <dd>
              {data.applied_version === null
                ? "Not yet"
                : `Version ${data.applied_version}${data.applied_version < data.version ? " (an older one)" : ""}`}
              {data.applied_at ? `, ${formatDateTime(data.applied_at)}` : ""}
            </dd>
            <dt>Screenshots</dt>
            <dd>{yesNo(data.settings.screenshot_allowed)}</dd>
            <dt>Clipboard sharing</dt>
            <dd>{yesNo(data.settings.clipboard_sharing)}</dd>
            <dt>USB devices</dt>
            <dd>{yesNo(data.settings.usb_allowed)}</dd>
          </dl>
          {mayChange ? (
            <ChangePolicy
              deviceId={deviceId}
              current={data.assignment === "default" ? FOLLOW_DEFAULT : data.policy_id}
              onChanged={() => {
                policy.reload();
                onChanged();
              }}
            />
          ) : null}
        </div>
      ) : policy.isLoading ? (
        <Loading label="Loading the policy" />
      ) : null}
    </section>
  );
}

/** PUT /devices/:id/policy with the chosen policy (or null: follow the default). */
function ChangePolicy({
  deviceId,
  current,
  onChanged,
}: {
  deviceId: string;
  current: string;
  onChanged: () => void;
}) {
  const [choice, setChoice] = useState(current);
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  useEffect(() => setChoice(current), [current]);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const view = await unwrap(
        api.PUT("/api/v1/devices/{id}/policy", {
          params: { path: { id: deviceId } },
          body: { policy_id: policyIdOf(choice) },
        }),
      );
      notify(`Policy changed to ${view.name}`);
      onChanged();
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="filters" onSubmit={submit}>
      <DevicePolicySelect
        label="Change policy"
        value={choice}
        error={fieldError(error, "policy_id")}
        onChange={setChoice}
      />
      <button type="submit" disabled={isBusy || choice === current || choice === ""}>
        {isBusy ? "Applying…" : "Apply policy"}
      </button>
      <div class="wide">
        <ErrorNotice error={formError(error, ["policy_id"])} />
      </div>
    </form>
  );
}
