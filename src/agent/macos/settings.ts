/**
 * Where macOS keeps what the agent reads and writes, and the programs it runs: each by its absolute path
 * (a root daemon must never take a program from PATH), as paths under ROOT where they are files.
 */

/** The OS version, as osquery reads it (`ProductVersion`, `ProductBuildVersion`, `ProductName`). */
export const SYSTEM_VERSION_PLIST = "/System/Library/CoreServices/SystemVersion.plist";

/** The tunnel: wg-quick names it after its file; on macOS the kernel's interface is a `utunN`. */
export const TUNNEL_NAME = "bulwark";
/** wg-quick (darwin.bash) writes the utun it made here while the tunnel is up; /var/run empties at boot. */
export const TUNNEL_NAME_FILE = `/var/run/wireguard/${TUNNEL_NAME}.name`;

/** Homebrew's prefixes: Apple silicon's first, then Intel's. wireguard-tools installs wg and wg-quick there. */
export const HOMEBREW_PREFIXES = ["/opt/homebrew", "/usr/local"] as const;

/** The tunnel's file under a Homebrew prefix (wg-quick's own folder there, SYSCONFDIR/wireguard). */
export function wireguardConfPath(prefix: string): string {
  return `${prefix}/etc/wireguard/${TUNNEL_NAME}.conf`;
}

/** The programs the macOS agent runs, by absolute path. */
export const PROGRAMS = {
  fdesetup: "/usr/bin/fdesetup",
  socketfilterfw: "/usr/libexec/ApplicationFirewall/socketfilterfw",
  profiles: "/usr/bin/profiles",
  open: "/usr/bin/open",
  dscacheutil: "/usr/bin/dscacheutil",
  killall: "/usr/bin/killall",
  launchctl: "/bin/launchctl",
  scutil: "/usr/sbin/scutil",
  ioreg: "/usr/sbin/ioreg",
  stat: "/usr/bin/stat",
  env: "/usr/bin/env",
  sudo: "/usr/bin/sudo",
} as const;

/** The folder of what the agent hands to people (the restrictions profile): readable by them, 0755. */
export const SHARED_FOLDER = "/Library/Application Support/Bulwark";

/**
 * The files the macOS agent writes, as paths under ROOT (the tunnel's is under a Homebrew prefix). The
 * hosts file by its real folder: /etc is a symbolic link to private/etc on macOS, and the agent follows
 * no link on its way to a file it writes.
 */
export const MACOS_FILES = {
  hosts: "/private/etc/hosts",
  profile: `${SHARED_FOLDER}/bulwark-restrictions.mobileconfig`,
} as const;

/** The restrictions profile's identifier: `profiles` finds and removes it by this name. */
export const PROFILE_IDENTIFIER = "com.bulwark.agent.restrictions";

/** The launch daemon (install-service). */
export const DAEMON_LABEL = "com.bulwark.agent";
export const DAEMON_PLIST = `/Library/LaunchDaemons/${DAEMON_LABEL}.plist`;

/**
 * The state folder: /var/db is where macOS keeps its daemons' private state (root's, outside any user's
 * view and out of Spotlight). /Library/Application Support/Bulwark holds the profile people must be able
 * to open, so the keys and token are kept apart from it.
 */
export const MACOS_STATE_DIR = "/var/db/bulwark-agent";
