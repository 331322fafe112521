import { ANDROID_SUPPORT, IOS_SUPPORT } from "../../agent/enforce/phone-support";
import type { SettingSupport } from "../../agent/enforce/platform-support";
import { SETTINGS_BY_PATH } from "./policy-settings";

export type PhonePlatform = "ios" | "android";

/** Each phone's table, from the one the profile builder follows (src/agent/enforce/phone-support.ts). */
export const PHONE_SUPPORT: Record<PhonePlatform, Record<string, SettingSupport>> = {
  ios: IOS_SUPPORT,
  android: ANDROID_SUPPORT,
};

const PHONE_NAMES: Record<PhonePlatform, string> = { ios: "an iPhone", android: "an Android phone" };

function labelOf(path: string): string {
  return SETTINGS_BY_PATH.get(path)?.label ?? path;
}

/**
 * What a phone without an agent will and will not enforce, said before it is added: the settings its
 * profile or tunnel carries, then the rest, collapsed, each with why.
 */
export function PhoneSupport({ platform }: { platform: PhonePlatform }) {
  const entries = Object.entries(PHONE_SUPPORT[platform]);
  const enforced = entries.filter(([, support]) => support.outcome === "enforced");
  const others = entries.filter(([, support]) => support.outcome !== "enforced");
  return (
    <section class="phone-support" aria-labelledby={`phone-support-${platform}`}>
      <h3 id={`phone-support-${platform}`}>What {PHONE_NAMES[platform]} will enforce</h3>
      <p class="small">
        Nothing on the phone reports back: its compliance stays unknown, and the user can remove what was
        installed.
      </p>
      {enforced.length > 0 ? (
        <ul>
          {enforced.map(([path, support]) => (
            <li key={path}>
              <strong>{labelOf(path)}</strong>: {support.how}.
            </li>
          ))}
        </ul>
      ) : (
        <p>
          No policy setting: the WireGuard app carries the tunnel while the user keeps it up, and the server's
          VPN settings decide what it carries.
        </p>
      )}
      <details>
        <summary>
          Not enforced on {PHONE_NAMES[platform]}: {others.length} settings, and why
        </summary>
        <ul>
          {others.map(([path, support]) => (
            <li key={path}>
              <strong>{labelOf(path)}</strong>: {support.how}.
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
