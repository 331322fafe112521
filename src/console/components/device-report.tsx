import { Fragment } from "preact";
import type { Schemas } from "../api/client";
import { RelativeTime } from "./relative-time";
import { StatusBadge } from "./status";

type Device = Schemas["Device"];

/** The facts an agent reports, in words. */
const FACT_LABELS: Record<string, string> = {
  disk_encrypted: "Disk encrypted",
  vpn_connected: "VPN connected",
  screen_lock_enabled: "Screen lock",
  firewall_enabled: "Firewall on",
  usb_storage_blocked: "USB storage blocked",
  usb_devices_blocked: "USB devices blocked",
  screenshots_blocked: "Screenshots blocked",
};

function factText(value: unknown): string {
  if (value === true) return "Yes";
  if (value === false) return "No";
  return value === null ? "null" : String(value);
}

/** What the agent last reported: its facts, any this server does not know, and what it enforced. */
export function DeviceReport({ device }: { device: Device }) {
  const { facts, ignored_facts: ignored, enforcement } = device;
  return (
    <section class="card" aria-labelledby="report-title">
      <h2 id="report-title">Reported by the agent</h2>
      <h3>Facts</h3>
      {facts && Object.keys(facts).length > 0 ? (
        <dl class="details">
          {Object.entries(facts).map(([name, value]) => (
            <Fragment key={name}>
              <dt>
                {FACT_LABELS[name] ?? name} <code class="muted small">{name}</code>
              </dt>
              <dd>{factText(value)}</dd>
            </Fragment>
          ))}
        </dl>
      ) : (
        <p class="muted">No facts reported yet.</p>
      )}
      {ignored ? (
        <div class="notice notice-warn">
          <p>
            <strong>Not known to this server</strong>, kept but not judged (a newer agent, or a misspelled
            name):
          </p>
          <ul>
            {Object.entries(ignored).map(([name, value]) => (
              <li key={name}>
                <code>{name}</code> = {factText(value)}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <h3>Enforcement</h3>
      {enforcement ? (
        <>
          <p class="muted small">
            reported <RelativeTime value={enforcement.reported_at} />
          </p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users must reach a region that scrolls sideways on a phone (WCAG 2.1.1); it holds no link */}
          <section class="table-wrap" tabIndex={0} aria-label="Enforcement">
            <table class="table-stack">
              <caption class="visually-hidden">Each policy setting and what the agent did with it</caption>
              <thead>
                <tr>
                  <th scope="col">Setting</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {enforcement.settings.map((entry, index) => (
                  <tr key={`${entry.setting}-${index}`}>
                    <td>
                      <code>{entry.setting}</code>
                    </td>
                    <td data-label="Outcome">
                      <StatusBadge value={entry.outcome} />
                    </td>
                    <td data-label="Detail">{entry.detail ?? <span class="muted">none</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      ) : (
        <p class="muted">No enforcement reported yet.</p>
      )}
    </section>
  );
}
