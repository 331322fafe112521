import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatDateTime, formatNumber } from "../lib/format";
import { CopyField } from "./copy";
import { ErrorNotice } from "./feedback";
import { Checkbox, Field } from "./form";
import { type Choices, type EnrollmentChoices, userLabel } from "./integration-choices";
import { shortId } from "./integration-labels";

export type CreatedToken = Schemas["CreatedEnrollmentToken"];

const FIELDS = ["expires_in_hours", "max_uses", "policy_id", "user_id"];

/**
 * The command a Linux device runs to enroll itself (docs/agent-api.md): its host name as the device
 * name and its machine id as the stable hardware id. The JSON body stays in single quotes, broken over
 * lines only between members so it reads in the box; just the two command substitutions step outside
 * the quotes.
 */
/** Fetches the agent (this server's executable) and checks it against the digest the server publishes. */
export function agentDownloadCommand(origin: string): string {
  return [
    `curl -fsSLo bulwark ${origin}/api/v1/agent/download && chmod +x bulwark`,
    `curl -fsS ${origin}/api/v1/agent/download.sha256 | sha256sum -c`,
  ].join("\n");
}

/** Enrolls the machine with the agent fetched by agentDownloadCommand. */
export function agentEnrollCommand(origin: string, token: string): string {
  return `sudo ./bulwark agent enroll --server ${origin} --token ${token}`;
}

export function enrollCommand(origin: string, token: string): string {
  return [
    `curl -X POST ${origin}/api/v1/devices/enroll \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '{"enrollment_token":"${token}",`,
    `  "device_name":"'$(hostname)'","platform":"linux",`,
    `  "agent_version":"1.0.0","hardware_id":"'$(cat /etc/machine-id)'"}'`,
  ].join("\n");
}

/** The form that creates an enrollment token: lifetime, how many devices, and optionally a policy and a user. */
export function EnrollmentTokenForm({
  choices,
  onCreated,
}: {
  choices: EnrollmentChoices;
  onCreated: (token: CreatedToken) => void;
}) {
  const [hours, setHours] = useState("168");
  const [maxUses, setMaxUses] = useState("1");
  const [isUnlimited, setUnlimited] = useState(false);
  const [policyId, setPolicyId] = useState("");
  const [userId, setUserId] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const { policies, users } = choices;

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const token = await unwrap(
        api.POST("/api/v1/enrollment-tokens", {
          body: {
            expires_in_hours: Number(hours),
            max_uses: isUnlimited ? null : Number(maxUses),
            ...(policyId ? { policy_id: policyId } : {}),
            ...(userId ? { user_id: userId } : {}),
          },
        }),
      );
      onCreated(token);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} aria-labelledby="new-token">
      <h2 id="new-token">Create a token</h2>
      <ErrorNotice error={formError(error, FIELDS)} title="The token could not be created" />
      <div class="filters">
        <Field
          label="Expires after (hours)"
          hint="1 to 8760; 168 is a week."
          error={fieldError(error, "expires_in_hours")}
        >
          {(control) => (
            <input
              {...control}
              type="number"
              inputMode="numeric"
              min={1}
              max={8760}
              step={1}
              required
              value={hours}
              onInput={(event) => setHours(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="Devices it may enroll"
          hint="Each enrollment uses it once."
          error={fieldError(error, "max_uses")}
        >
          {(control) => (
            <input
              {...control}
              type="number"
              inputMode="numeric"
              min={1}
              max={1_000_000}
              step={1}
              required={!isUnlimited}
              disabled={isUnlimited}
              value={isUnlimited ? "" : maxUses}
              onInput={(event) => setMaxUses(event.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      <Checkbox
        label="Unlimited devices"
        hint="Until it expires or is revoked: for enrolling a whole batch of devices."
        checked={isUnlimited}
        onChange={setUnlimited}
      />
      <div class="filters">
        <ChoiceSelect
          label="Policy (optional)"
          hint="Devices enrolled with it follow this policy."
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
          hint="Devices enrolled with it are assigned to this user."
          noun="users"
          noneLabel="Nobody"
          choices={users}
          value={userId}
          error={fieldError(error, "user_id")}
          optionLabel={userLabel}
          onChange={setUserId}
        />
      </div>
      <div class="button-row">
        <button type="submit" disabled={isBusy}>
          {isBusy ? "Creating…" : "Create token"}
        </button>
      </div>
    </form>
  );
}

/**
 * A select among policies or users, loaded a page at a time ("List more" for the next page); not shown
 * when the signed-in user may not read them (nothing loads then).
 */
export function ChoiceSelect<T extends { id: string }>({
  label,
  hint,
  noun,
  noneLabel,
  choices,
  value,
  error,
  optionLabel,
  onChange,
}: {
  label: string;
  hint: string;
  noun: string;
  noneLabel: string;
  choices: Choices<T>;
  value: string;
  error?: string | undefined;
  optionLabel: (item: T) => string;
  onChange: (id: string) => void;
}) {
  if (!choices.isLoading && choices.items.length === 0 && !choices.error) return null;
  const hasMore = choices.total > choices.items.length;
  return (
    <div>
      <ErrorNotice error={choices.error} title={`The ${noun} could not be loaded`} />
      <Field
        label={label}
        hint={
          hasMore
            ? `${hint} ${formatNumber(choices.items.length)} of ${formatNumber(choices.total)} ${noun} listed.`
            : hint
        }
        error={error}
      >
        {(control) => (
          <select {...control} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
            <option value="">{noneLabel}</option>
            {choices.items.map((item) => (
              <option key={item.id} value={item.id}>
                {optionLabel(item)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {hasMore ? (
        <button type="button" class="button-link" disabled={choices.isLoading} onClick={choices.loadMore}>
          List more {noun}
        </button>
      ) : null}
    </div>
  );
}

/** The new token, shown this once, with the command that enrolls a device with it. */
export function EnrollmentTokenCreated({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Move focus to the result so keyboard and screen reader users land on what they must copy.
  useEffect(() => heading.current?.focus(), []);
  const uses =
    token.max_uses === null
      ? "any number of devices"
      : `${formatNumber(token.max_uses)} ${token.max_uses === 1 ? "device" : "devices"}`;
  return (
    <section aria-labelledby="token-created">
      <h2 id="token-created" ref={heading} tabIndex={-1}>
        Token created
      </h2>
      <div class="notice notice-warn">
        <strong>Copy it now: it won't be shown again.</strong>
        <p>
          It enrolls {uses} until {formatDateTime(token.expires_at)}. Anyone who has it can enroll a device,
          so share it only with the device's owner.
        </p>
      </div>
      <CopyField label="Enrollment token" value={token.token} isCode />
      <p class="muted small">Enroll a Linux machine with the agent: run both commands on it.</p>
      <CopyField label="1. Fetch the agent" value={agentDownloadCommand(location.origin)} isCode />
      <CopyField
        label="2. Enroll with the agent"
        value={agentEnrollCommand(location.origin, token.token)}
        isCode
      />
      <details>
        <summary>Without the agent: enroll with curl</summary>
        <CopyField
          label="Enroll command (Linux)"
          value={enrollCommand(location.origin, token.token)}
          isCode
        />
        <p class="muted small">
          It sends the device's host name and its machine id (from /etc/machine-id) and answers with the
          device token an agent uses from then on. Other platforms send the same request with their own
          platform and a stable hardware id.
        </p>
      </details>
      <div class="button-row">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

/** Names a token's user and policy from the choices loaded for the form; an id when the name isn't loaded. */
export function ownerNames(
  choices: EnrollmentChoices,
  token: { user_id: string | null; policy_id: string | null },
) {
  const user = token.user_id ? choices.users.items.find((item) => item.id === token.user_id) : undefined;
  const policy = token.policy_id
    ? choices.policies.items.find((item) => item.id === token.policy_id)
    : undefined;
  return {
    user: token.user_id ? (user ? userLabel(user) : `User ${shortId(token.user_id)}`) : null,
    policy: token.policy_id ? (policy ? policy.name : `Policy ${shortId(token.policy_id)}`) : null,
  };
}
