import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

/** The ids of the hint and error that describe a control, for aria-describedby. */
function describedBy(id: string, hint: unknown, error: string | undefined): string {
  return [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
}

function Hint({ id, hint }: { id: string; hint: ComponentChildren }) {
  return hint ? (
    <p id={`${id}-hint`} class="hint">
      {hint}
    </p>
  ) : null;
}

/** The problem, marked with a symbol as well as the colour. */
function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p id={`${id}-error`} class="field-error">
      <span aria-hidden="true">⚠ </span>
      {error}
    </p>
  ) : null;
}

interface FieldProps {
  label: string;
  /** Shown under the label; read with the control (aria-describedby). */
  hint?: ComponentChildren;
  /** The problem with the value, from the server's validation; marks the control invalid. */
  error?: string | undefined;
  /** Renders the control with the ids that tie it to its label, hint and error. */
  children: (control: {
    id: string;
    "aria-describedby"?: string;
    "aria-invalid"?: boolean;
  }) => ComponentChildren;
  class?: string;
}

/** A labelled control with its hint and its error, wired for screen readers. */
export function Field({ label, hint, error, children, class: className }: FieldProps) {
  const id = useId();
  const described = describedBy(id, hint, error);
  return (
    <div class={`field${error ? " field-invalid" : ""}${className ? ` ${className}` : ""}`}>
      <label for={id}>{label}</label>
      <Hint id={id} hint={hint} />
      {children({
        id,
        ...(described ? { "aria-describedby": described } : {}),
        ...(error ? { "aria-invalid": true } : {}),
      })}
      <FieldError id={id} error={error} />
    </div>
  );
}

/** A checkbox with its label after it, and an optional hint and error. */
export function Checkbox({
  label,
  hint,
  error,
  checked,
  disabled,
  name,
  onChange,
}: {
  label: string;
  hint?: string;
  error?: string | undefined;
  checked: boolean;
  disabled?: boolean;
  name?: string;
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  const described = describedBy(id, hint, error);
  return (
    <div class={`checkbox${error ? " field-invalid" : ""}`}>
      <input
        type="checkbox"
        id={id}
        name={name}
        checked={checked}
        disabled={disabled}
        onChange={(event) => onChange(event.currentTarget.checked)}
        aria-describedby={described || undefined}
        aria-invalid={error ? true : undefined}
      />
      <label for={id}>{label}</label>
      <Hint id={id} hint={hint} />
      <FieldError id={id} error={error} />
    </div>
  );
}
