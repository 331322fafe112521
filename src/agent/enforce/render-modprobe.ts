/**
 * modprobe.d(5) lines that make the USB mass-storage drivers impossible to load: `install` replaces the
 * module's loading with a command, and /bin/false loads nothing. A driver already loaded stays loaded
 * until it is unloaded or the machine restarts.
 */
export function renderModprobeConf(): string {
  return [
    "# Written by the Bulwark agent (storage.external_storage_allowed = false); it is removed when the",
    "# policy allows external storage again. USB storage drivers are not loaded:",
    "install usb-storage /bin/false",
    "install uas /bin/false",
    "",
  ].join("\n");
}
