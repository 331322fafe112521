/**
 * The agent's section of /etc/hosts: the lines between `# BEGIN bulwark` and `# END bulwark`. Everything
 * outside the section is kept byte for byte; the section is replaced where it stands.
 */
export const HOSTS_BEGIN = "# BEGIN bulwark";
export const HOSTS_END = "# END bulwark";

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/** The blocked domains split into the exact names a hosts file can block, wildcards, and anything else. */
export function sortBlockedDomains(domains: readonly string[]): {
  names: string[];
  wildcards: string[];
  invalid: string[];
} {
  const names: string[] = [];
  const wildcards: string[] = [];
  const invalid: string[] = [];
  for (const domain of domains) {
    if (domain.startsWith("*.")) wildcards.push(domain);
    else if (HOST_NAME.test(domain)) names.push(domain.toLowerCase());
    else invalid.push(domain);
  }
  return { names, wildcards, invalid };
}

/** The section for `names`: each one mapped to 0.0.0.0 and to :: so that neither IPv4 nor IPv6 reaches it. */
export function renderHostsSection(names: readonly string[]): string {
  const lines = [
    HOSTS_BEGIN,
    "# Written by the Bulwark agent (network.blocked_domains); edits here are replaced.",
  ];
  for (const name of names) lines.push(`0.0.0.0 ${name}`, `:: ${name}`);
  lines.push(HOSTS_END, "");
  return lines.join("\n");
}

/** Where the section lies in `text` (start of its first line, end after its last line), or null. */
function findSection(text: string): { start: number; end: number } | null {
  const lines = text.split("\n");
  let offset = 0;
  let start = -1;
  for (const [index, line] of lines.entries()) {
    const lineEnd = offset + line.length + (index < lines.length - 1 ? 1 : 0);
    if (start < 0 && line.trimEnd() === HOSTS_BEGIN) start = offset;
    else if (start >= 0 && line.trimEnd() === HOSTS_END) return { start, end: lineEnd };
    offset = lineEnd;
  }
  if (start >= 0) throw new Error(`/etc/hosts has "${HOSTS_BEGIN}" without "${HOSTS_END}" after it`);
  return null;
}

/** `text` with the section put in place (replacing the one there, else appended on a line of its own). */
export function withHostsSection(text: string, section: string): string {
  const found = findSection(text);
  if (found) return text.slice(0, found.start) + section + text.slice(found.end);
  if (text === "" || text.endsWith("\n")) return text + section;
  return `${text}\n${section}`;
}

/**
 * `text` without the section. When that is the file as the agent found it, give back exactly that
 * (`original`, which may lack its final line break, or null for a file that did not exist; undefined
 * when the journal does not know it).
 */
export function withoutHostsSection(text: string, original: string | null | undefined): string | null {
  const found = findSection(text);
  const stripped = found ? text.slice(0, found.start) + text.slice(found.end) : text;
  if (original === undefined) return stripped;
  if (original === null) return stripped === "" ? null : stripped;
  if (stripped === original || (!original.endsWith("\n") && stripped === `${original}\n`)) return original;
  return stripped;
}
