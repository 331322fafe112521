import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatNumber } from "../lib/format";
import { Link } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { countDevices } from "./device-labels";
import { DevicePolicySelect, policyIdOf } from "./device-policy-select";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";
import { StatusBadge } from "./status";

/** The actions of POST /devices/bulk. */
export type BulkAction = "suspend" | "unsuspend" | "wipe" | "assign_policy";

/** A device picked in the list: its id for the request, its name for the dialog and the results. */
export interface SelectedDevice {
  id: string;
  name: string;
}

/** What a bulk request did, with the names of the devices it was asked about. */
export interface BulkOutcome {
  action: BulkAction;
  result: Schemas["BulkResult"];
  names: Record<string, string>;
}

const ACTION_LABELS: Record<BulkAction, string> = {
  suspend: "Suspend",
  unsuspend: "Unsuspend",
  wipe: "Wipe",
  assign_policy: "Assign policy",
};

/** The bar shown while devices are selected: how many, and what can be done to all of them. */
export function DeviceBulkBar({
  selected,
  onClear,
  onDone,
}: {
  selected: SelectedDevice[];
  onClear: () => void;
  onDone: (outcome: BulkOutcome) => void;
}) {
  const [action, setAction] = useState<BulkAction | null>(null);
  const mayAssignPolicy = can(useStore(sessionStore), "policies:read");
  if (selected.length === 0) return null;
  const actions: BulkAction[] = [
    "suspend",
    "unsuspend",
    "wipe",
    ...(mayAssignPolicy ? ["assign_policy" as const] : []),
  ];
  return (
    <section class="card" aria-label="Bulk actions">
      <div class="button-row">
        <strong>{countDevices(selected.length)} selected</strong>
        {actions.map((item) => (
          <button
            key={item}
            type="button"
            class={item === "wipe" ? "button-danger" : "button-secondary"}
            onClick={() => setAction(item)}
          >
            {ACTION_LABELS[item]}…
          </button>
        ))}
        <button type="button" class="button-link" onClick={onClear}>
          Clear selection
        </button>
      </div>
      <DeviceBulkDialog
        action={action}
        selected={selected}
        onClose={() => setAction(null)}
        onDone={(outcome) => {
          setAction(null);
          onDone(outcome);
        }}
      />
    </section>
  );
}

/** The names of the chosen devices, the first ten and how many more. */
function SelectedNames({ selected }: { selected: SelectedDevice[] }) {
  const shown = selected.slice(0, 10);
  return (
    <ul class="small">
      {shown.map((device) => (
        <li key={device.id}>{device.name}</li>
      ))}
      {selected.length > shown.length ? (
        <li>and {formatNumber(selected.length - shown.length)} more</li>
      ) : null}
    </ul>
  );
}

/** Asks for what the action needs (a reason, a policy), sends POST /devices/bulk, and hands back the outcome. */
function DeviceBulkDialog({
  action,
  selected,
  onClose,
  onDone,
}: {
  action: BulkAction | null;
  selected: SelectedDevice[];
  onClose: () => void;
  onDone: (outcome: BulkOutcome) => void;
}) {
  const [reason, setReason] = useState("");
  const [notifyUser, setNotifyUser] = useState(true);
  const [policy, setPolicy] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    setReason("");
    setNotifyUser(true);
    setPolicy("");
    setError(undefined);
  }, [action]);

  const count = countDevices(selected.length);
  const needsReason = action === "suspend" || action === "wipe";
  const submit = async () => {
    if (!action) return;
    setError(undefined);
    try {
      const result = await unwrap(
        api.POST("/api/v1/devices/bulk", {
          body: {
            device_ids: selected.map((device) => device.id),
            action,
            ...(needsReason ? { reason } : {}),
            ...(action === "wipe" ? { notify_user: notifyUser } : {}),
            ...(action === "assign_policy" ? { policy_id: policyIdOf(policy) } : {}),
          },
        }),
      );
      onDone({
        action,
        result,
        names: Object.fromEntries(selected.map((device) => [device.id, device.name])),
      });
    } catch (failure) {
      setError(asApiError(failure));
    }
  };

  const titles: Record<BulkAction, string> = {
    suspend: `Suspend ${count}?`,
    unsuspend: `Unsuspend ${count}?`,
    wipe: `Wipe ${count}?`,
    assign_policy: `Assign a policy to ${count}`,
  };
  const confirmLabels: Record<BulkAction, string> = {
    suspend: `Suspend ${count}`,
    unsuspend: `Unsuspend ${count}`,
    wipe: `Wipe ${count}`,
    assign_policy: `Assign to ${count}`,
  };
  const explanations: Record<BulkAction, string> = {
    suspend:
      "Suspended devices lose VPN access and their certificates are revoked until they are unsuspended.",
    unsuspend: "Each device becomes online or offline again, by when it last checked in.",
    wipe: "Each device's agent erases the work profile at its next check-in. This cannot be undone.",
    assign_policy:
      "The devices receive the policy at their next check-in; compliance is checked again at once.",
  };
  return (
    <ConfirmDialog
      title={action ? titles[action] : ""}
      open={action !== null}
      confirmLabel={action ? confirmLabels[action] : ""}
      isDanger={action === "wipe" || action === "suspend"}
      onConfirm={submit}
      onClose={onClose}
    >
      {action ? (
        <>
          <p>{explanations[action]}</p>
          <SelectedNames selected={selected} />
          <ErrorNotice error={formError(error, ["reason", "policy_id"])} />
          {needsReason ? (
            <Field
              label="Reason"
              hint="Kept with each device and in the audit log."
              error={fieldError(error, "reason")}
            >
              {(control) => (
                <textarea
                  {...control}
                  required
                  maxLength={500}
                  value={reason}
                  onInput={(event) => setReason(event.currentTarget.value)}
                />
              )}
            </Field>
          ) : null}
          {action === "wipe" ? (
            <Checkbox
              label="Tell each device's user before wiping"
              checked={notifyUser}
              onChange={setNotifyUser}
            />
          ) : null}
          {action === "assign_policy" ? (
            <DevicePolicySelect value={policy} error={fieldError(error, "policy_id")} onChange={setPolicy} />
          ) : null}
        </>
      ) : null}
    </ConfirmDialog>
  );
}

/** What the last bulk action did to each device; focused when it appears so it is read out. */
export function DeviceBulkResults({ outcome, onDismiss }: { outcome: BulkOutcome; onDismiss: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [outcome]);
  const { result } = outcome;
  return (
    <section class="card" aria-labelledby="bulk-results-title">
      <h2 id="bulk-results-title" ref={heading} tabIndex={-1}>
        {ACTION_LABELS[outcome.action]}: {formatNumber(result.succeeded)} succeeded,{" "}
        {formatNumber(result.failed)} failed
      </h2>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">The result for each device</caption>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Result</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {result.results.map((item) => (
              <tr key={item.device_id}>
                <td>
                  <Link href={`/devices/${item.device_id}`}>
                    {outcome.names[item.device_id] ?? item.device_id}
                  </Link>
                </td>
                <td>
                  <StatusBadge
                    value={item.success ? "success" : "failure"}
                    label={item.success ? "Succeeded" : "Failed"}
                  />
                </td>
                <td>{item.error ?? <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <button type="button" class="button-secondary" onClick={onDismiss}>
        Dismiss
      </button>
    </section>
  );
}
