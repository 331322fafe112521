/**
 * Text as XML (and HTML) character data or an attribute's value: `&`, `<`, `>` and `"` escaped, and a
 * character XML 1.0 cannot hold at all (a control character other than tab, line feed and carriage
 * return) turned into U+FFFD, so that the document stays one every parser accepts.
 */
export function escapeXml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
  );
}
