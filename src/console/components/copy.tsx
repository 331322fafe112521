import { useId, useState } from "preact/hooks";

/** Enough rows for the value's lines as they wrap (about 60 characters to a row), up to 10. */
function visibleRows(value: string): number {
  const rows = value.split("\n").reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 60)), 0);
  return Math.min(10, rows);
}

/** A value to copy (a new API key, an enrollment token, a command): read-only, selectable, one button. */
export function CopyField({ label, value, isCode }: { label: string; value: string; isCode?: boolean }) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 3000);
    } catch {
      (document.getElementById(id) as HTMLTextAreaElement | null)?.select();
    }
  };
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <textarea
          id={id}
          class={isCode ? "code" : ""}
          readOnly
          rows={visibleRows(value)}
          value={value}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" class="button-secondary" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <span class="visually-hidden" role="status">
        {copied ? `${label} copied` : ""}
      </span>
    </div>
  );
}
