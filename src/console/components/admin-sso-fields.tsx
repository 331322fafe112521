import type { ComponentChildren } from "preact";
import type { ApiError } from "../api/client";
import { fieldError, listFieldError } from "../lib/api-errors";
import { ROLE_INFO, ROLES, type Role } from "./admin-roles";
import { Checkbox, Field } from "./form";

/** The console's own sign-in callback: every connection accepts it as a redirect URI. */
export function consoleCallbackUrl(): string {
  return `${location.origin}/console/sso/callback`;
}

/** A textarea of one value per line, as the list the API takes. */
export function linesOf(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

/** What both kinds of connection share: where sign-ins may return, whose email domains, and new users. */
export interface ConnectionCommon {
  redirectUris: string;
  allowedDomains: string;
  defaultRole: Role;
  isAutoProvisioned: boolean;
}

export function commonOf(
  connection:
    | {
        redirect_uris: string[];
        allowed_domains: string[];
        default_role: Role;
        auto_provision: boolean;
      }
    | undefined,
): ConnectionCommon {
  return {
    redirectUris: (connection?.redirect_uris ?? []).join("\n"),
    allowedDomains: (connection?.allowed_domains ?? []).join("\n"),
    defaultRole: connection?.default_role ?? "member",
    isAutoProvisioned: connection?.auto_provision ?? true,
  };
}

export function commonChange(common: ConnectionCommon) {
  return {
    redirect_uris: linesOf(common.redirectUris),
    allowed_domains: linesOf(common.allowedDomains),
    default_role: common.defaultRole,
    auto_provision: common.isAutoProvisioned,
  };
}

/** A labelled textarea whose lines are a list. */
function LinesField({
  label,
  hint,
  value,
  error,
  placeholder,
  onChange,
}: {
  label: string;
  hint: ComponentChildren;
  value: string;
  error: string | undefined;
  placeholder: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(control) => (
        <textarea
          {...control}
          class="code"
          rows={3}
          value={value}
          placeholder={placeholder}
          spellcheck={false}
          autoComplete="off"
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** Redirect URIs, allowed domains, the role of new users and automatic creation, with their errors. */
export function ConnectionCommonFields({
  prefix,
  value,
  error,
  onChange,
}: {
  /** "sso.oidc" or "sso.saml": where the server's field errors point. */
  prefix: string;
  value: ConnectionCommon;
  error: ApiError | undefined;
  onChange: (value: ConnectionCommon) => void;
}) {
  const callback = consoleCallbackUrl();
  const hasCallback = linesOf(value.redirectUris).includes(callback);
  return (
    <>
      <LinesField
        label="Redirect URIs"
        hint={
          <>
            One per line: your applications' addresses that may receive a finished sign-in. The console's own{" "}
            <code>{callback}</code> is always accepted; at least one line is needed while the connection is
            enabled, so list the console's if it is the only one.
          </>
        }
        value={value.redirectUris}
        error={listFieldError(error, `${prefix}.redirect_uris`)}
        placeholder="https://app.example.com/sso/callback"
        onChange={(redirectUris) => onChange({ ...value, redirectUris })}
      />
      {hasCallback ? null : (
        <p>
          <button
            type="button"
            class="button-secondary"
            onClick={() =>
              onChange({ ...value, redirectUris: [...linesOf(value.redirectUris), callback].join("\n") })
            }
          >
            Add the console's callback
          </button>
        </p>
      )}
      <LinesField
        label="Allowed email domains"
        hint="One per line (example.com). People with these email domains are offered this sign-in, and new ones get an account when automatic creation is on."
        value={value.allowedDomains}
        error={listFieldError(error, `${prefix}.allowed_domains`)}
        placeholder="example.com"
        onChange={(allowedDomains) => onChange({ ...value, allowedDomains })}
      />
      <Checkbox
        label="Create accounts on first sign-in"
        hint="Off: only people who already have a Bulwark account (matched by verified email) can sign in this way."
        checked={value.isAutoProvisioned}
        error={fieldError(error, `${prefix}.auto_provision`)}
        onChange={(isAutoProvisioned) => onChange({ ...value, isAutoProvisioned })}
      />
      <Field
        label="Role of new accounts"
        hint={ROLE_INFO[value.defaultRole].description}
        error={fieldError(error, `${prefix}.default_role`)}
      >
        {(control) => (
          <select
            {...control}
            value={value.defaultRole}
            onChange={(event) => onChange({ ...value, defaultRole: event.currentTarget.value as Role })}
          >
            {ROLES.map((role) => (
              <option key={role} value={role}>
                {ROLE_INFO[role].label}
              </option>
            ))}
          </select>
        )}
      </Field>
    </>
  );
}

/** The fields a connection's form shows inline; every other problem goes in the notice above it. */
export function connectionFields(prefix: string, own: string[]): string[] {
  return [
    ...own.map((field) => `${prefix}.${field}`),
    `${prefix}.redirect_uris`,
    `${prefix}.allowed_domains`,
    `${prefix}.auto_provision`,
    `${prefix}.default_role`,
  ];
}
