import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { navigate } from "../lib/router";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";
import { Checkbox, Field } from "./form";
import { useEnrollmentChoices, userLabel } from "./integration-choices";
import { ChoiceSelect } from "./integration-enrollment-form";

type Device = Schemas["Device"];
type Dialog = "edit" | "suspend" | "wipe" | "delete" | "retire" | null;

/**
 * What can be done to one device, by its state: rename it or give it to a user, suspend or unsuspend,
 * wipe (unless wiped or a wipe is pending; never a phone without an agent, which nothing could erase),
 * delete (only once wiped) or, where delete is refused, retire (a device that will never confirm a
 * wipe). `onChanged` reloads the page's data;
 * `onWipeRequested` starts following the new wipe.
 */
export function DeviceActions({
  device,
  isWipePending,
  onChanged,
  onWipeRequested,
}: {
  device: Device;
  isWipePending: boolean;
  onChanged: () => void;
  onWipeRequested: (wipeId: string) => void;
}) {
  const [dialog, setDialog] = useState<Dialog>(null);
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const isWiped = device.status === "wiped";
  const open = (which: Dialog) => {
    setError(undefined);
    setDialog(which);
  };

  const unsuspend = async () => {
    setError(undefined);
    setBusy(true);
    try {
      const change = await unwrap(
        api.PUT("/api/v1/devices/{id}/status", {
          params: { path: { id: device.id } },
          body: { status: "online" },
        }),
      );
      notify(`${device.device_name} unsuspended: it is ${change.status} now`);
      onChanged();
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {!isWiped ? (
        <button type="button" class="button-secondary" onClick={() => open("edit")}>
          Edit…
        </button>
      ) : null}
      {device.status === "suspended" ? (
        <button type="button" class="button-secondary" disabled={isBusy} onClick={unsuspend}>
          Unsuspend
        </button>
      ) : null}
      {!isWiped && device.status !== "suspended" ? (
        <button type="button" class="button-secondary" onClick={() => open("suspend")}>
          Suspend…
        </button>
      ) : null}
      {!isWiped && !isWipePending && device.vpn_profile ? (
        <button type="button" class="button-danger" disabled aria-describedby="wipe-needs-agent">
          Wipe…
        </button>
      ) : !isWiped && !isWipePending ? (
        <button type="button" class="button-danger" onClick={() => open("wipe")}>
          Wipe…
        </button>
      ) : null}
      {isWiped ? (
        <button type="button" class="button-danger" onClick={() => open("delete")}>
          Delete…
        </button>
      ) : (
        <button type="button" class="button-danger" onClick={() => open("retire")}>
          Retire…
        </button>
      )}
      {!isWiped && device.vpn_profile ? (
        <p id="wipe-needs-agent" class="wide small">
          No wipe without an agent: suspend the phone to cut its tunnel, then retire it.
        </p>
      ) : null}
      {dialog === null && error ? (
        <div class="wide">
          <ErrorNotice error={error} />
        </div>
      ) : null}
      <SuspendDialog
        device={device}
        open={dialog === "suspend"}
        onClose={() => setDialog(null)}
        onDone={() => {
          setDialog(null);
          onChanged();
        }}
      />
      <WipeDialog
        device={device}
        open={dialog === "wipe"}
        onClose={() => setDialog(null)}
        onDone={(wipeId) => {
          setDialog(null);
          onWipeRequested(wipeId);
          onChanged();
        }}
      />
      <DeleteDialog device={device} open={dialog === "delete"} onClose={() => setDialog(null)} />
      <RetireDialog device={device} open={dialog === "retire"} onClose={() => setDialog(null)} />
      {dialog === "edit" ? (
        <EditDialog
          device={device}
          open
          onClose={() => setDialog(null)}
          onDone={() => {
            setDialog(null);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}

interface DialogProps {
  device: Device;
  open: boolean;
  onClose: () => void;
}

/** Suspension needs a reason: it is kept with the device and in the audit log. */
function SuspendDialog({ device, open, onClose, onDone }: DialogProps & { onDone: () => void }) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const submit = async () => {
    setError(undefined);
    try {
      await unwrap(
        api.PUT("/api/v1/devices/{id}/status", {
          params: { path: { id: device.id } },
          body: { status: "suspended", reason },
        }),
      );
      notify(`${device.device_name} suspended`);
      setReason("");
      onDone();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`Suspend ${device.device_name}?`}
      open={open}
      confirmLabel="Suspend device"
      isDanger
      onConfirm={submit}
      onClose={onClose}
    >
      <p>
        The device loses VPN access and its certificate is revoked until it is unsuspended. It still receives
        a wipe if one is requested.
      </p>
      <ErrorNotice error={formError(error, ["reason"])} />
      <ReasonField value={reason} error={fieldError(error, "reason")} onChange={setReason} />
    </ConfirmDialog>
  );
}

/** A wipe is irreversible: the device's name must be typed, and a reason given. */
function WipeDialog({ device, open, onClose, onDone }: DialogProps & { onDone: (wipeId: string) => void }) {
  const [reason, setReason] = useState("");
  const [notifyUser, setNotifyUser] = useState(true);
  const [error, setError] = useState<ApiError | undefined>();
  const submit = async () => {
    setError(undefined);
    try {
      const wipe = await unwrap(
        api.POST("/api/v1/devices/{id}/wipe", {
          params: { path: { id: device.id } },
          body: { reason, notify_user: notifyUser },
        }),
      );
      notify(`Wipe of ${device.device_name} requested`);
      setReason("");
      onDone(wipe.wipe_id);
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`Wipe ${device.device_name}?`}
      open={open}
      confirmLabel="Wipe device"
      typeToConfirm={device.device_name}
      isDanger
      onConfirm={submit}
      onClose={onClose}
    >
      <p>
        At its next check-in, the agent on <strong>{device.device_name}</strong> erases the work profile: work
        apps, accounts and data. The device then stops being managed. This cannot be undone.
      </p>
      <ErrorNotice error={formError(error, ["reason", "notify_user"])} />
      <ReasonField value={reason} error={fieldError(error, "reason")} onChange={setReason} />
      <Checkbox
        label="Tell the device's user before wiping"
        checked={notifyUser}
        error={fieldError(error, "notify_user")}
        onChange={setNotifyUser}
      />
    </ConfirmDialog>
  );
}

/** Deleting forgets a wiped device: its record, log and VPN address. */
function DeleteDialog({ device, open, onClose }: DialogProps) {
  const [error, setError] = useState<ApiError | undefined>();
  const submit = async () => {
    setError(undefined);
    try {
      await unwrap(api.DELETE("/api/v1/devices/{id}", { params: { path: { id: device.id } } }));
      notify(`${device.device_name} deleted`);
      navigate("/devices");
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`Delete ${device.device_name}?`}
      open={open}
      confirmLabel="Delete device"
      isDanger
      onConfirm={submit}
      onClose={onClose}
    >
      <p>
        <strong>{device.device_name}</strong> is removed from the device list with its activity log, and its
        VPN address is freed. The audit log keeps what happened to it.
      </p>
      <ErrorNotice error={error} />
    </ConfirmDialog>
  );
}

/**
 * Retiring removes a device that will never confirm a wipe (lost, stolen, destroyed): irreversible, so
 * the device's name must be typed, and a reason given.
 */
function RetireDialog({ device, open, onClose }: DialogProps) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const submit = async () => {
    setError(undefined);
    try {
      const retired = await unwrap(
        api.POST("/api/v1/devices/{id}/retire", { params: { path: { id: device.id } }, body: { reason } }),
      );
      notify(
        `${device.device_name} retired${retired.cancelled_wipe_id ? ": its pending wipe was cancelled" : ""}`,
      );
      navigate("/devices");
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`Retire ${device.device_name}?`}
      open={open}
      confirmLabel="Retire device"
      typeToConfirm={device.device_name}
      isDanger
      onConfirm={submit}
      onClose={onClose}
    >
      <p>
        For a device that will never confirm a wipe: lost, stolen or destroyed.{" "}
        <strong>{device.device_name}</strong> is removed from the device list at once: its device token and
        certificate stop working, its VPN access and address go
        {device.latest_wipe?.status === "pending" ? ", its pending wipe is cancelled" : ""}, and its hardware
        may enroll again. Nothing is erased on the device itself. The audit log keeps what happened to it.
      </p>
      <ErrorNotice error={formError(error, ["reason"])} />
      <ReasonField
        value={reason}
        error={fieldError(error, "reason")}
        hint="Kept in the audit log and sent with the device.retired event."
        onChange={setReason}
      />
    </ConfirmDialog>
  );
}

/** Renames the device or gives it to another user (or to nobody). */
function EditDialog({ device, open, onClose, onDone }: DialogProps & { onDone: () => void }) {
  const [name, setName] = useState(device.device_name);
  const [userId, setUserId] = useState(device.user_id ?? "");
  const [error, setError] = useState<ApiError | undefined>();
  const { users } = useEnrollmentChoices();
  const submit = async () => {
    setError(undefined);
    try {
      await unwrap(
        api.PATCH("/api/v1/devices/{id}", {
          params: { path: { id: device.id } },
          body: { device_name: name, user_id: userId === "" ? null : userId },
        }),
      );
      notify(`${name.trim()} saved`);
      onDone();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <ConfirmDialog
      title={`Edit ${device.device_name}`}
      open={open}
      confirmLabel="Save"
      onConfirm={submit}
      onClose={onClose}
    >
      <ErrorNotice error={formError(error, ["device_name", "user_id"])} />
      <Field label="Name" error={fieldError(error, "device_name")}>
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
      <ChoiceSelect
        label="User"
        hint="Whose device it is."
        noun="users"
        noneLabel="Nobody"
        choices={users}
        value={userId}
        error={fieldError(error, "user_id")}
        optionLabel={userLabel}
        onChange={setUserId}
      />
    </ConfirmDialog>
  );
}

function ReasonField({
  value,
  error,
  hint = "Kept with the device and in the audit log.",
  onChange,
}: {
  value: string;
  error: string | undefined;
  hint?: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field label="Reason" hint={hint} error={error}>
      {(control) => (
        <textarea
          {...control}
          required
          maxLength={500}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
