import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { Link, useLocation } from "../lib/router";
import { can, type Scope, type Session, signOut } from "../lib/session";
import { Toasts } from "./feedback";
import { Logo } from "./logo";

interface NavItem {
  href: string;
  label: string;
  /** Shown only to users who may use the page. */
  scope?: Scope;
}

export const NAV_ITEMS: NavItem[] = [
  { href: "/", label: "Dashboard", scope: "devices:read" },
  { href: "/devices", label: "Devices", scope: "devices:read" },
  { href: "/enrollment-tokens", label: "Enrollment tokens", scope: "devices:write" },
  { href: "/policies", label: "Policies", scope: "policies:read" },
  { href: "/webhooks", label: "Webhooks", scope: "admin" },
  { href: "/users", label: "Users", scope: "users:read" },
  { href: "/api-keys", label: "API keys" },
  { href: "/audit", label: "Audit log", scope: "audit:read" },
  { href: "/settings", label: "Organization", scope: "admin" },
  { href: "/account", label: "Your account" },
];

function isCurrent(href: string, path: string): boolean {
  return href === "/" ? path === "/" : path === href || path.startsWith(`${href}/`);
}

/** The signed-in frame: a skip link, the navigation (a menu button on phones), and the page. */
export function Shell({ session, children }: { session: Session; children: ComponentChildren }) {
  const { path } = useLocation();
  const [isMenuOpen, setMenuOpen] = useState(false);
  const items = NAV_ITEMS.filter((item) => !item.scope || can(session, item.scope));
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="menu-button button-secondary"
          aria-expanded={isMenuOpen}
          aria-controls="primary-nav"
          onClick={() => setMenuOpen(!isMenuOpen)}
        >
          Menu
        </button>
        <Link href="/" class="brand">
          <Logo /> Bulwark
        </Link>
        <div class="topbar-user">
          <Link href="/account" aria-current={path === "/account" ? "page" : undefined}>
            {session.user.name || session.user.email}
          </Link>
          <button type="button" class="button-secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="primary-nav" class={`sidebar${isMenuOpen ? " sidebar-open" : ""}`} aria-label="Main">
        <ul>
          {items.map((item) => (
            <li key={item.href}>
              <Link
                href={item.href}
                aria-current={isCurrent(item.href, path) ? "page" : undefined}
                onClick={() => setMenuOpen(false)}
              >
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {children}
      </main>
      <Toasts />
    </div>
  );
}

/** A page's title (focused on navigation, so screen readers announce the page) and its actions. */
export function PageHeader({
  title,
  children,
  description,
}: {
  title: string;
  description?: ComponentChildren;
  children?: ComponentChildren;
}) {
  document.title = `${title} · Bulwark`;
  return (
    <div class="page-header">
      <div>
        <h1 tabIndex={-1}>{title}</h1>
        {description ? <p class="muted">{description}</p> : null}
      </div>
      {children ? <div class="button-row">{children}</div> : null}
    </div>
  );
}
