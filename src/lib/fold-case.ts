/**
 * A text as comparisons that ignore case see it: composed (NFC, so that "é" typed either way is one
 * letter) and lower-cased in every script, not only ASCII.
 */
export function foldCase(text: string): string {
  return text.normalize("NFC").toLowerCase();
}
