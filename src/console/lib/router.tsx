import type { AnchorHTMLAttributes, ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/** The console's own URLs: /console/devices/123 is the route "/devices/123". */
export const BASE = "/console";

export interface Location {
  /** The path below /console, starting with "/". */
  path: string;
  query: URLSearchParams;
}

function currentLocation(): Location {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || "/" : "/";
  return { path, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
addEventListener("popstate", () => {
  for (const listener of listeners) listener();
});

/** Goes to a console path ("/devices?status=online"); `replace` keeps the history entry. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const listener of listeners) listener();
  // A new page: move focus to its heading so a screen reader announces it, and start at the top.
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>("main h1");
    heading?.focus({ preventScroll: true });
    scrollTo(0, 0);
  });
}

/** Changes the query string of the current page without a new history entry (filters, page numbers). */
export function setQuery(values: Record<string, string | number | undefined | null>): void {
  const query = new URLSearchParams(location.search);
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === "") query.delete(key);
    else query.set(key, String(value));
  }
  const search = query.toString();
  history.replaceState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
  for (const listener of listeners) listener();
}

export function useLocation(): Location {
  const [value, setValue] = useState(currentLocation);
  useEffect(() => {
    const update = () => setValue(currentLocation());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return value;
}

/**
 * Matches a path against a pattern such as "/devices/:id"; the named segments, or null.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const patternParts = pattern.split("/").filter(Boolean);
  const pathParts = path.split("/").filter(Boolean);
  if (patternParts.length !== pathParts.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of patternParts.entries()) {
    const actual = pathParts[index] ?? "";
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(actual);
    else if (part !== actual) return null;
  }
  return params;
}

type AnchorProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren };

/** A link inside the console: a real <a href> (open in a new tab works) that routes without reloading. */
export function Link({ href, children, onClick: onClickToo, ...rest }: AnchorProps) {
  const onClick = (event: MouseEvent) => {
    if (typeof onClickToo === "function") onClickToo(event as Parameters<typeof onClickToo>[0]);
    const isPlainClick =
      event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey;
    if (event.defaultPrevented || !isPlainClick) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={`${BASE}${href}`} onClick={onClick}>
      {children}
    </a>
  );
}
