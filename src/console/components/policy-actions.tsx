import { useEffect, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import { formatNumber } from "../lib/format";
import { Link, navigate } from "../lib/router";
import { createStore, useStore } from "../lib/store";
import { ConfirmDialog } from "./dialog";
import { ErrorNotice, notify } from "./feedback";

type Policy = Schemas["Policy"];

function devices(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? "device" : "devices"}`;
}

/** Makes the policy the organization default: every device without a policy of its own follows it. */
export function SetDefaultPolicyButton({
  policy,
  currentDefault,
  onDone,
}: {
  policy: Policy;
  currentDefault: string | undefined;
  onDone: () => void;
}) {
  const [isOpen, setOpen] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const confirm = async () => {
    setError(undefined);
    try {
      await unwrap(api.PUT("/api/v1/policies/default", { body: { policy_id: policy.id } }));
      setOpen(false);
      notify(`“${policy.name}” is now the organization default`);
      onDone();
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  return (
    <>
      <button type="button" class="button-secondary" onClick={() => setOpen(true)}>
        Set as default
      </button>
      <ConfirmDialog
        title={`Make “${policy.name}” the default?`}
        open={isOpen}
        confirmLabel="Make it the default"
        onConfirm={confirm}
        onClose={() => {
          setError(undefined);
          setOpen(false);
        }}
      >
        <p>
          Devices without a policy of their own will follow “{policy.name}”
          {currentDefault ? ` instead of “${currentDefault}”` : ""}, from their next check-in. New devices
          enrolled without a policy get it too.
        </p>
        <ErrorNotice error={error} title="The default could not be changed" />
      </ConfirmDialog>
    </>
  );
}

/** What the last deletion answered, for the policy list to show after leaving the deleted policy's page. */
interface Deletion {
  name: string;
  affectedDevices: number;
  fallbackPolicyId: string;
}
const lastDeletion = createStore<Deletion | null>(null);

/** Deletes the policy after naming it; its devices fall back to the default (the default itself can't go). */
export function DeletePolicyButton({ policy }: { policy: Policy }) {
  const [isOpen, setOpen] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const confirm = async () => {
    setError(undefined);
    try {
      const answer = await unwrap(
        api.DELETE("/api/v1/policies/{id}", { params: { path: { id: policy.id } } }),
      );
      lastDeletion.set({
        name: policy.name,
        affectedDevices: answer.affected_devices,
        fallbackPolicyId: answer.fallback_policy,
      });
      setOpen(false);
      notify(`Policy “${policy.name}” deleted`);
      navigate("/policies");
    } catch (failure) {
      setError(asApiError(failure));
    }
  };
  const isDefaultRefusal = error?.reason === "default_policy_not_deletable";
  return (
    <>
      <button type="button" class="button-danger" onClick={() => setOpen(true)}>
        Delete…
      </button>
      <ConfirmDialog
        title={`Delete “${policy.name}”?`}
        open={isOpen}
        confirmLabel="Delete policy"
        isDanger
        onConfirm={confirm}
        onClose={() => {
          setError(undefined);
          setOpen(false);
        }}
      >
        <p>
          The policy and its {policy.version === 1 ? "version" : `${policy.version} versions`} of history are
          removed.{" "}
          {policy.device_count > 0 ? `Its ${devices(policy.device_count)}` : "Any devices assigned to it"}{" "}
          will follow the organization default policy from their next check-in.
        </p>
        {isDefaultRefusal ? (
          <div class="notice notice-error" role="alert">
            <p>
              <strong>This is the organization default policy, so it can't be deleted.</strong>
            </p>
            <p>Make another policy the default first (Set as default on its page), then delete this one.</p>
          </div>
        ) : (
          <ErrorNotice error={error} title="The policy could not be deleted" />
        )}
      </ConfirmDialog>
    </>
  );
}

/** After a deletion: which policy went, and where its devices went (the answer's affected_devices and fallback). */
export function PolicyDeletedNotice({ defaultPolicy }: { defaultPolicy: Policy | undefined }) {
  const deletion = useStore(lastDeletion);
  // Said once: leaving the list forgets it.
  useEffect(() => () => lastDeletion.set(null), []);
  if (!deletion) return null;
  // The fallback is the default; its name shows once the list page has loaded the default.
  const fallback = (
    <Link href={`/policies/${deletion.fallbackPolicyId}`}>
      {defaultPolicy?.id === deletion.fallbackPolicyId
        ? defaultPolicy.name
        : "the organization default policy"}
    </Link>
  );
  const isNamed = defaultPolicy?.id === deletion.fallbackPolicyId;
  return (
    <div class="notice notice-ok">
      <p>
        <strong>
          <span aria-hidden="true">✓ </span>Policy “{deletion.name}” deleted.
        </strong>{" "}
        {deletion.affectedDevices === 0 ? (
          <>No devices followed it. Devices without a policy follow {fallback}.</>
        ) : (
          <>
            {devices(deletion.affectedDevices)} that followed it now{" "}
            {deletion.affectedDevices === 1 ? "follows" : "follow"} {fallback}
            {isNamed ? ", the organization default" : ""}.
          </>
        )}
      </p>
      <div class="button-row">
        <button type="button" class="button-secondary" onClick={() => lastDeletion.set(null)}>
          Dismiss
        </button>
      </div>
    </div>
  );
}
