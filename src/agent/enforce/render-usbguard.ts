import type { UsbDeviceClass } from "../../domain/policies/policy-document";

/**
 * USB interface class codes (usb.org "Defined Class Codes") of the classes a policy can allow. `hub` is
 * always allowed (the first rule); `other` names no class, so it cannot be written as a rule.
 */
const CLASS_CODES: Record<UsbDeviceClass, string | null> = {
  audio: "01",
  communications: "02",
  hid: "03",
  imaging: "06",
  printer: "07",
  mass_storage: "08",
  hub: "09",
  smart_card: "0b",
  video: "0e",
  wireless: "e0",
  other: null,
};

/** The classes among `classes` that no usbguard rule can express. */
/** A class's interface code; null for a class without one and for a name that is no class at all. */
function classCode(name: string): string | null {
  // Own properties only: "constructor" or "__proto__" from a hostile answer is no class.
  return Object.hasOwn(CLASS_CODES, name) ? (CLASS_CODES[name as UsbDeviceClass] ?? null) : null;
}

export function unmappableUsbClasses(classes: readonly UsbDeviceClass[]): UsbDeviceClass[] {
  return classes.filter((name) => classCode(name) === null);
}

/**
 * The usbguard rule file (usbguard-rules.conf(5)) for `usb.allowed = false`: hubs, then each
 * whitelisted vendor:product, then each allowed class, then `block` for every other device. Rules are
 * matched first to last, so `block` also ends the rule files that sort after this one.
 */
export function renderUsbguardRules(
  whitelist: readonly string[],
  classes: readonly UsbDeviceClass[],
): string {
  const lines = [
    "# Written by the Bulwark agent (usb.allowed = false); usbguard reads it when it starts.",
    "# Each rule is in usbguard's own form, as `usbguard list-rules` prints it back.",
    "# Hubs, so that allowed devices behind them work:",
    "allow with-interface 09:00:*",
  ];
  for (const id of whitelist) {
    // The server checks the form; a value that is not vendor:product is never written into the rules.
    if (/^[0-9a-f]{4}:[0-9a-f]{4}$/i.test(id)) lines.push(`allow id ${id.toLowerCase()}`);
  }
  for (const name of classes) {
    const code = classCode(name);
    if (code !== null && name !== "hub") lines.push(`allow with-interface one-of { ${code}:*:* }`);
  }
  lines.push("block", "");
  return lines.join("\n");
}
