import type { Ref } from "preact";
import { ANDROID_SUPPORT, IOS_SUPPORT } from "../../agent/enforce/phone-support";
import {
  LINUX_SUPPORT,
  MACOS_SUPPORT,
  type SupportOutcome,
  WINDOWS_SUPPORT,
} from "../../agent/enforce/platform-support";
import { Checkbox, Field } from "./form";
import { messageFor, type PlacedProblem, type PolicyFormValues } from "./policy-form-model";
import { POLICY_SECTIONS, SETTINGS_BY_PATH, type SettingDefinition } from "./policy-settings";

const MAX_FILE_SIZE_MB = 1_048_576;

/** The id of the wrapper around a control: what the error summary's links point at. */
function anchorOf(target: string): string {
  return `edit-${target.replace(/\./g, "-")}`;
}

/** The name a problem's control goes by, for the error summary. */
function labelOf(target: string | null): string {
  if (target === "name") return "Name";
  if (target === "description") return "Description";
  return (target && SETTINGS_BY_PATH.get(target)?.label) || "Policy";
}

/** Where a problem sits in the form, top to bottom: the summary lists them in that order. */
function orderOf(problem: PlacedProblem): number {
  if (problem.target === "name") return 0;
  if (problem.target === "description") return 1;
  const index = [...SETTINGS_BY_PATH.keys()].indexOf(problem.target ?? "");
  return index === -1 ? 1000 : index + 2;
}

/** Problems in the order of the form, then by line. */
export function sortProblems(problems: PlacedProblem[]): PlacedProblem[] {
  return [...problems].sort((a, b) => orderOf(a) - orderOf(b) || (a.line ?? 0) - (b.line ?? 0));
}

/** Focuses a problem's control; in a list, selects the line that is wrong. */
function focusProblem(problem: PlacedProblem): void {
  if (!problem.target) return;
  const control = document.getElementsByName(problem.target)[0];
  if (!(control instanceof HTMLElement)) return;
  control.scrollIntoView({ block: "center" });
  control.focus();
  if (control instanceof HTMLTextAreaElement && problem.line !== undefined) {
    const lines = control.value.split("\n");
    const start = lines.slice(0, problem.line - 1).reduce((total, line) => total + line.length + 1, 0);
    control.setSelectionRange(start, start + (lines[problem.line - 1]?.length ?? 0));
  }
}

/**
 * The error summary (GOV.UK pattern): every problem at the top of the form, each a link to its control.
 * It gets focus when a save is refused, so screen readers read it out.
 */
export function PolicyErrorSummary({
  problems,
  summaryRef,
}: {
  problems: PlacedProblem[];
  summaryRef: Ref<HTMLElement>;
}) {
  if (problems.length === 0) return null;
  return (
    <section
      class="notice notice-error"
      tabIndex={-1}
      ref={summaryRef}
      aria-labelledby="policy-error-summary"
    >
      <h2 id="policy-error-summary">
        {problems.length === 1
          ? "There is a problem with this policy"
          : `There are ${problems.length} problems with this policy`}
      </h2>
      <ul>
        {problems.map((problem, index) => (
          <li key={index}>
            {problem.target ? (
              <a
                href={`#${anchorOf(problem.target)}`}
                onClick={(event) => {
                  event.preventDefault();
                  focusProblem(problem);
                }}
              >
                {labelOf(problem.target)}: {problem.message}
              </a>
            ) : (
              problem.message
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One setting's control, its hint (what it means) and its problems. */
const OUTCOME_WORDS: Record<SupportOutcome, string> = {
  enforced: "enforced",
  reported: "checked and reported, not changed",
  unsupported: "not enforced",
  pending_approval: "enforced once the user approves it",
};

/** The same for a phone, where nothing reports back: "checked and reported" would promise too much. */
const PHONE_OUTCOME_WORDS: Record<SupportOutcome, string> = {
  enforced: "enforced while the profile is installed",
  reported: "not changed on the phone",
  unsupported: "not enforced",
  pending_approval: "enforced once the user approves it",
};

/**
 * What each platform does with a setting, from the tables the agents plan by and the phones' profile is
 * built by: said under the control, so that what a device will do is known before saving (and a wildcard
 * domain the agents cannot block is named as it is typed). Phones have no agent: their lines say what
 * the profile (iOS) or the WireGuard app's tunnel (Android) carries.
 */
function PlatformSupport({ setting, value }: { setting: SettingDefinition; value: boolean | string }) {
  const linux = Object.hasOwn(LINUX_SUPPORT, setting.path)
    ? LINUX_SUPPORT[setting.path as keyof typeof LINUX_SUPPORT]
    : null;
  const windows = Object.hasOwn(WINDOWS_SUPPORT, setting.path)
    ? WINDOWS_SUPPORT[setting.path as keyof typeof WINDOWS_SUPPORT]
    : null;
  const macos = Object.hasOwn(MACOS_SUPPORT, setting.path)
    ? MACOS_SUPPORT[setting.path as keyof typeof MACOS_SUPPORT]
    : null;
  const ios = Object.hasOwn(IOS_SUPPORT, setting.path)
    ? IOS_SUPPORT[setting.path as keyof typeof IOS_SUPPORT]
    : null;
  const android = Object.hasOwn(ANDROID_SUPPORT, setting.path)
    ? ANDROID_SUPPORT[setting.path as keyof typeof ANDROID_SUPPORT]
    : null;
  if (!linux || !windows || !macos || !ios || !android) return null;
  const wildcards =
    setting.path === "network.blocked_domains"
      ? String(value)
          .split(/\r?\n/)
          .map((line) => line.trim())
          .filter((line) => line.startsWith("*."))
      : [];
  return (
    <p class="hint platform-support" data-setting={setting.path}>
      <span class={`support support-${linux.outcome}`}>Linux: {OUTCOME_WORDS[linux.outcome]}</span>
      {` (${linux.how}). `}
      {wildcards.length > 0 ? (
        <strong class="support-warning">
          On Linux, Windows and macOS {wildcards.join(", ")} {wildcards.length === 1 ? "is" : "are"} not
          blocked: only exact names are.{" "}
        </strong>
      ) : null}
      <span class={`support support-${windows.outcome}`}>Windows: {OUTCOME_WORDS[windows.outcome]}</span>
      {` (${windows.how}). `}
      <span class={`support support-${macos.outcome}`}>macOS: {OUTCOME_WORDS[macos.outcome]}</span>
      {` (${macos.how}). `}
      <span class={`support support-${ios.outcome}`}>
        iOS (VPN profile): {PHONE_OUTCOME_WORDS[ios.outcome]}
      </span>
      {` (${ios.how}). `}
      <span class={`support support-${android.outcome}`}>
        Android (VPN profile): {PHONE_OUTCOME_WORDS[android.outcome]}
      </span>
      {` (${android.how}).`}
    </p>
  );
}

function SettingControl({
  setting,
  value,
  error,
  isDisabled,
  onChange,
}: {
  setting: SettingDefinition;
  value: boolean | string;
  error: string | undefined;
  isDisabled: boolean;
  onChange: (value: boolean | string) => void;
}) {
  if (setting.kind === "boolean") {
    return (
      <>
        <Checkbox
          label={setting.label}
          hint={setting.hint}
          error={error}
          name={setting.path}
          checked={value === true}
          onChange={onChange}
        />
        <PlatformSupport setting={setting} value={value} />
      </>
    );
  }
  const text = String(value);
  return (
    <>
      <Field label={setting.label} hint={setting.hint} error={error}>
        {(control) =>
          setting.kind === "select" ? (
            <select
              {...control}
              name={setting.path}
              value={text}
              disabled={isDisabled}
              onChange={(event) => onChange(event.currentTarget.value)}
            >
              {setting.options?.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          ) : setting.kind === "number" ? (
            <input
              {...control}
              name={setting.path}
              type="number"
              inputMode="numeric"
              min={0}
              max={MAX_FILE_SIZE_MB}
              step={1}
              value={text}
              onInput={(event) => onChange(event.currentTarget.value)}
            />
          ) : (
            <textarea
              {...control}
              name={setting.path}
              class="wide code"
              rows={Math.min(12, Math.max(3, text.split("\n").length + 1))}
              spellcheck={false}
              autoCapitalize="off"
              autoComplete="off"
              value={text}
              onInput={(event) => onChange(event.currentTarget.value)}
            />
          )
        }
      </Field>
      <PlatformSupport setting={setting} value={value} />
    </>
  );
}

/** The name, the description and every setting of the four sections, each with its problems beside it. */
export function PolicyFormFields({
  name,
  description,
  values,
  problems,
  onName,
  onDescription,
  onSetting,
}: {
  name: string;
  description: string;
  values: PolicyFormValues;
  problems: PlacedProblem[];
  onName: (name: string) => void;
  onDescription: (description: string) => void;
  onSetting: (path: string, value: boolean | string) => void;
}) {
  return (
    <>
      <section class="card" aria-labelledby="edit-about">
        <h2 id="edit-about">Name and description</h2>
        <div id={anchorOf("name")}>
          <Field
            label="Name"
            hint="Unique in your organization; it is how people choose this policy for a device."
            error={messageFor(problems, "name")}
          >
            {(control) => (
              <input
                {...control}
                name="name"
                class="wide"
                maxLength={200}
                autoComplete="off"
                value={name}
                onInput={(event) => onName(event.currentTarget.value)}
              />
            )}
          </Field>
        </div>
        <div id={anchorOf("description")}>
          <Field
            label="Description"
            hint="Optional: what the policy is for and which devices should follow it."
            error={messageFor(problems, "description")}
          >
            {(control) => (
              <textarea
                {...control}
                name="description"
                class="wide"
                rows={2}
                maxLength={2000}
                value={description}
                onInput={(event) => onDescription(event.currentTarget.value)}
              />
            )}
          </Field>
        </div>
      </section>
      {POLICY_SECTIONS.map((part) => (
        <section key={part.key} class="card" aria-labelledby={`edit-${part.key}`}>
          <h2 id={`edit-${part.key}`}>{part.title}</h2>
          <p class="muted">{part.description}</p>
          {part.settings.map((setting) => (
            <div key={setting.path} id={anchorOf(setting.path)}>
              <SettingControl
                setting={setting}
                value={values[setting.path] ?? ""}
                error={messageFor(problems, setting.path)}
                // The direction only means something while sharing is on (the server requires none otherwise).
                isDisabled={
                  setting.path === "dlp.clipboard_direction" && values["dlp.clipboard_sharing"] !== true
                }
                onChange={(value) => onSetting(setting.path, value)}
              />
            </div>
          ))}
        </section>
      ))}
    </>
  );
}
