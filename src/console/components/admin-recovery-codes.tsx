import { useEffect, useRef } from "preact/hooks";
import { CopyField } from "./copy";

/** New recovery codes, shown once: the user copies or writes them down before dismissing them. */
export function RecoveryCodesPanel({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // The codes appear after an action elsewhere on the page: bring them to the user's attention.
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="notice notice-ok" aria-labelledby="recovery-codes-title">
      <h2 id="recovery-codes-title" ref={heading} tabIndex={-1}>
        Save your recovery codes
      </h2>
      <p>
        If you lose your phone or security key, each of these codes signs you in once instead of a second
        factor. They are shown only now: copy them to a password manager or print them, and keep them safe.
      </p>
      <CopyField label="Recovery codes" value={codes.join("\n")} isCode />
      <div class="button-row">
        <button type="button" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </section>
  );
}
