import { api, unwrap } from "../api/client";
import { formatNumber } from "../lib/format";
import { useApi } from "../lib/use-api";
import { ErrorNotice } from "./feedback";
import { Field } from "./form";

/** The option that sends policy_id null: the device follows whatever the organization default is. */
export const FOLLOW_DEFAULT = "default";

/** The largest page the API gives; organizations have a handful of policies, not hundreds. */
const POLICY_PAGE_SIZE = 100;

/**
 * A choice among the organization's policies (their first 100), plus "follow the organization default".
 * `value` is a policy id, FOLLOW_DEFAULT, or "" for no choice yet.
 */
export function DevicePolicySelect({
  label = "Policy",
  value,
  error,
  onChange,
}: {
  label?: string;
  value: string;
  error?: string | undefined;
  onChange: (value: string) => void;
}) {
  const policies = useApi(
    () => unwrap(api.GET("/api/v1/policies", { params: { query: { page_size: POLICY_PAGE_SIZE } } })),
    [],
  );
  const list = policies.data?.data ?? [];
  const total = policies.data?.total ?? 0;
  const defaultPolicy = list.find((policy) => policy.is_default);
  return (
    <>
      <ErrorNotice error={policies.error} title="The policies could not be loaded" />
      <Field
        label={label}
        error={error}
        hint={
          total > list.length
            ? `Only ${formatNumber(list.length)} of the ${formatNumber(total)} policies are listed.`
            : undefined
        }
      >
        {(control) => (
          <select
            {...control}
            required
            value={value}
            disabled={policies.isLoading && !policies.data}
            onChange={(event) => onChange(event.currentTarget.value)}
          >
            <option value="">
              {policies.isLoading && !policies.data ? "Loading policies…" : "Choose a policy"}
            </option>
            <option value={FOLLOW_DEFAULT}>
              Organization default{defaultPolicy ? ` (currently ${defaultPolicy.name})` : ""}
            </option>
            {[...list]
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((policy) => (
                <option key={policy.id} value={policy.id}>
                  {policy.name}
                  {policy.is_default ? " (the default)" : ""}
                </option>
              ))}
          </select>
        )}
      </Field>
    </>
  );
}

/** The policy_id to send for a DevicePolicySelect value. */
export function policyIdOf(value: string): string | null {
  return value === FOLLOW_DEFAULT ? null : value;
}
