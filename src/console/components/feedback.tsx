import type { ComponentChildren } from "preact";
import type { ApiError } from "../api/client";
import { createStore, useStore } from "../lib/store";

/** An error from the API, in words: the message, what to do (details), and the request id to report. */
export function ErrorNotice({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert">
      <strong>{title ?? error.body.message}</strong>
      {title ? <p>{error.body.message}</p> : null}
      {error.body.details ? <p>{error.body.details}</p> : null}
      {error.body.request_id ? <p class="muted small">Request id: {error.body.request_id}</p> : null}
    </div>
  );
}

export function Loading({ label = "Loading" }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}…
    </p>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

interface Toast {
  id: number;
  text: string;
  kind: "success" | "error";
}
const toasts = createStore<Toast[]>([]);
let nextToast = 1;

/** A short confirmation ("Policy saved"), read out by screen readers, gone after a few seconds. */
export function notify(text: string, kind: Toast["kind"] = "success"): void {
  const toast = { id: nextToast++, text, kind };
  toasts.set([...toasts.get(), toast]);
  setTimeout(() => toasts.set(toasts.get().filter((item) => item.id !== toast.id)), 6000);
}

export function Toasts() {
  const items = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {items.map((toast) => (
        <p key={toast.id} class={`toast toast-${toast.kind}`}>
          <span aria-hidden="true">{toast.kind === "success" ? "✓ " : "⚠ "}</span>
          {toast.text}
        </p>
      ))}
    </div>
  );
}
