/** Characters that show nothing: zero-width spaces and joiners, the word joiner, the byte-order mark. */
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g;

/**
 * A name as comparisons that ignore case and spacing see it, so that names a person cannot tell apart
 * are one: compatibility-composed (NFKC: "é" typed either way, a no-break space as a space, "ﬁ" as
 * "fi"), invisible characters dropped, every run of white space one space, no space at either end,
 * lower-cased in every script.
 */
export function foldCase(text: string): string {
  return text.normalize("NFKC").replace(INVISIBLE, "").replace(/\s+/g, " ").trim().toLowerCase();
}
