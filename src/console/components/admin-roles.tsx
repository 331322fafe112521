import { useId } from "preact/hooks";
import type { Schemas } from "../api/client";

export type Role = Schemas["Role"];

export const ROLES: readonly Role[] = ["admin", "operator", "auditor", "member"];

/** What each role may do, in words (the README's roles: the scopes each role carries). */
export const ROLE_INFO: Record<Role, { label: string; description: string }> = {
  admin: {
    label: "Admin",
    description:
      "Everything: users, organization and single sign-on settings, webhooks, devices, policies, audit log.",
  },
  operator: {
    label: "Operator",
    description: "Enrolls, suspends and wipes devices and edits policies; sees the users list.",
  },
  auditor: {
    label: "Auditor",
    description: "Reads devices, policies, users and the audit log; changes nothing.",
  },
  member: {
    label: "Member",
    description: "Self-service only: their own account, second factors and API keys.",
  },
};

export function roleLabel(role: Role): string {
  return ROLE_INFO[role]?.label ?? role;
}

/** The role as a group of radio buttons, each with what it allows, so the choice is made knowingly. */
export function RoleFieldset({
  legend = "Role",
  value,
  error,
  onChange,
}: {
  legend?: string;
  value: Role;
  error?: string | undefined;
  onChange: (role: Role) => void;
}) {
  const id = useId();
  return (
    <fieldset aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {ROLES.map((role) => (
        <div class="checkbox" key={role}>
          <input
            type="radio"
            id={`${id}-${role}`}
            name={`${id}-role`}
            value={role}
            checked={value === role}
            aria-describedby={`${id}-${role}-hint`}
            onChange={() => onChange(role)}
          />
          <label for={`${id}-${role}`}>{ROLE_INFO[role].label}</label>
          <p id={`${id}-${role}-hint`} class="hint">
            {ROLE_INFO[role].description}
          </p>
        </div>
      ))}
      {error ? (
        <p id={`${id}-error`} class="field-error">
          <span aria-hidden="true">⚠ </span>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
