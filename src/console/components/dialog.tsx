import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";

interface DialogProps {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
}

/**
 * A modal dialog (the browser's <dialog>: focus is kept inside, Escape closes it, focus returns to the
 * button that opened it).
 */
export function Dialog({ title, open, onClose, children }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} class="dialog">
      {open ? (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      ) : null}
    </dialog>
  );
}

interface ConfirmProps {
  title: string;
  open: boolean;
  /** What will happen, in words. */
  children: ComponentChildren;
  confirmLabel: string;
  /** For destructive actions: the text (a device's name) the user must type to enable the button. */
  typeToConfirm?: string;
  isDanger?: boolean;
  onConfirm: () => Promise<void> | void;
  onClose: () => void;
}

/** Asks before acting; a destructive action names what it destroys and may ask for it to be typed. */
export function ConfirmDialog({
  title,
  open,
  children,
  confirmLabel,
  typeToConfirm,
  isDanger,
  onConfirm,
  onClose,
}: ConfirmProps) {
  const [typed, setTyped] = useState("");
  const [isBusy, setBusy] = useState(false);
  const inputId = useId();
  useEffect(() => {
    if (open) setTyped("");
  }, [open]);
  const isReady = typeToConfirm === undefined || typed.trim() === typeToConfirm.trim();
  return (
    <Dialog title={title} open={open} onClose={onClose}>
      <form
        method="dialog"
        onSubmit={async (event) => {
          event.preventDefault();
          if (!isReady) return;
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
          }
        }}
      >
        {children}
        {typeToConfirm !== undefined ? (
          <div class="field">
            <label for={inputId}>
              Type <strong>{typeToConfirm}</strong> to confirm
            </label>
            <input
              id={inputId}
              value={typed}
              autoComplete="off"
              onInput={(event) => setTyped(event.currentTarget.value)}
            />
          </div>
        ) : null}
        <div class="button-row dialog-actions">
          <button type="button" class="button-secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class={isDanger ? "button-danger" : ""} disabled={!isReady || isBusy}>
            {isBusy ? "Working…" : confirmLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
