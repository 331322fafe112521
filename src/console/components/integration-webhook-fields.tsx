import { useId } from "preact/hooks";
import { Checkbox, Field } from "./form";
import { generateSecret } from "./integration-labels";

export const ALL_EVENTS = "*";

/** The event catalogue (docs/webhooks.md), each with what it means to a receiver. */
export const EVENT_CATALOGUE: readonly { name: string; description: string }[] = [
  { name: "device.enrolled", description: "a device enrolled with a token" },
  { name: "device.suspended", description: "a device was suspended" },
  { name: "device.unsuspended", description: "a suspended device was let back in" },
  { name: "device.wipe_requested", description: "someone asked for a device to be wiped" },
  { name: "device.wiped", description: "a device confirmed its wipe" },
  { name: "device.deleted", description: "a wiped device was deleted" },
  { name: "device.retired", description: "a device that will not confirm a wipe was removed" },
  { name: "device.unenrolled", description: "a device's agent removed it from the server" },
  { name: "device.updated", description: "a device was renamed or given to another user" },
  { name: "device.offline", description: "a device stopped checking in" },
  { name: "device.compliance_changed", description: "a device became compliant or non-compliant" },
  { name: "policy.created", description: "a policy was created" },
  { name: "policy.updated", description: "a policy changed (a new version)" },
  { name: "policy.deleted", description: "a policy was deleted" },
  { name: "policy.assigned", description: "a device was given another policy" },
  { name: "webhook.test", description: 'sent by "Send test event"' },
  { name: "gdpr.request_completed", description: "a data protection request was carried out" },
];

/** "All events", or the names of the chosen ones. */
export function describeEvents(events: string[]): string {
  return events.includes(ALL_EVENTS) ? "All events" : events.join(", ");
}

/**
 * The events a subscription receives: "all events" (`*`, including those added in later versions) or a
 * choice from the catalogue. While "all events" is on, the single events show as included and can't be
 * unticked one by one.
 */
export function EventsFieldset({
  value,
  error,
  onChange,
}: {
  value: string[];
  error?: string | undefined;
  onChange: (events: string[]) => void;
}) {
  const errorId = useId();
  const isAll = value.includes(ALL_EVENTS);
  const toggle = (name: string, isChecked: boolean) =>
    onChange(
      isChecked ? [...value.filter((item) => item !== name), name] : value.filter((item) => item !== name),
    );
  return (
    <fieldset aria-describedby={error ? errorId : undefined}>
      <legend>Events</legend>
      <Checkbox
        label="All events (*)"
        hint="Every event, including those later versions of Bulwark add."
        checked={isAll}
        onChange={(isChecked) => onChange(isChecked ? [ALL_EVENTS] : [])}
      />
      <div class="grid">
        {EVENT_CATALOGUE.map((event) => (
          // The wrapper keeps each checkbox its own height in the grid's row.
          <div key={event.name}>
            <Checkbox
              label={event.name}
              hint={event.description}
              checked={isAll || value.includes(event.name)}
              disabled={isAll}
              onChange={(isChecked) => toggle(event.name, isChecked)}
            />
          </div>
        ))}
      </div>
      {error ? (
        <p id={errorId} class="field-error">
          <span aria-hidden="true">⚠ </span>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/** The signing secret: typed, or generated here (32 random bytes) so it is strong by default. */
export function SecretField({
  label,
  value,
  error,
  isRequired,
  onChange,
}: {
  label: string;
  value: string;
  error?: string | undefined;
  isRequired: boolean;
  onChange: (secret: string) => void;
}) {
  return (
    <Field
      label={label}
      hint="16 to 256 characters. The receiver uses it to check each delivery's signature; it is never shown again once saved."
      error={error}
    >
      {(control) => (
        <div class="copy-row">
          <input
            {...control}
            type="text"
            class="code wide"
            autoComplete="off"
            spellcheck={false}
            minLength={16}
            maxLength={256}
            required={isRequired}
            value={value}
            onInput={(event) => onChange(event.currentTarget.value)}
          />
          <button type="button" class="button-secondary" onClick={() => onChange(generateSecret())}>
            Generate
          </button>
        </div>
      )}
    </Field>
  );
}
