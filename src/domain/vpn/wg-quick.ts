/** One section of a wg-quick file: its name, an optional comment above it, and its key = value lines. */
export interface WgQuickSection {
  name: "Interface" | "Peer";
  comment?: string;
  /** Entries whose value is undefined are left out; a `#` key writes its value as a comment line. */
  entries: [string, string | number | undefined][];
}

/**
 * Writes the wg-quick configuration format: `[Interface]` and `[Peer]` sections of `Key = value` lines,
 * `#` comments. Comments never carry a line break (a device name cannot inject a line).
 */
export function formatWgQuick(sections: WgQuickSection[]): string {
  return sections
    .map((section) => {
      const lines = section.comment === undefined ? [] : [`# ${oneLine(section.comment)}`];
      lines.push(`[${section.name}]`);
      for (const [key, value] of section.entries) {
        if (value === undefined) continue;
        lines.push(key === "#" ? `# ${oneLine(String(value))}` : `${key} = ${value}`);
      }
      return lines.join("\n");
    })
    .join("\n\n")
    .concat("\n");
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
}
