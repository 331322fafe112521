/**
 * Regular expressions in RE2 syntax, compiled with re2js (a JavaScript port of RE2, see
 * https://github.com/google/re2/wiki/Syntax): its engine matches in time linear in the input, whatever
 * the pattern, so a pattern one person writes can run on another's data. It knows nothing of policies:
 * whoever accepts a pattern and whoever later matches it compile it with the same function.
 */
import type * as Re2js from "re2js";
import type { RE2JS, RE2JSException } from "re2js";

/**
 * The largest compiled program accepted, in RE2 instructions (`RE2JS.programSize()`). re2js, like RE2,
 * refuses repetition counts over 1000 (nested counts multiplied) but allows programs of up to ~1.4 million
 * instructions, and compiling and matching cost grows with the program: a 289,000-instruction pattern
 * took 0.34 s to compile and 6 s to scan 120 kB, a 10,000-instruction one ~50 ms to compile. Ten
 * 1000-fold repetitions of a character class fit.
 */
export const MAX_RE2_PROGRAM_SIZE = 10_000;

/** A compiled pattern, or why the text is refused (a phrase that follows the pattern's name). */
export type Re2PatternResult = { ok: true; pattern: RE2JS } | { ok: false; problem: string };

const LINEAR_TIME = "patterns run on a linear-time engine";

// re2js's error descriptions (its Parser.ERR_* constants, the same words as Go's regexp/syntax).
const PERL_SYNTAX = "invalid or unsupported Perl syntax";
const NAMED_CAPTURE = "invalid named capture";
const ESCAPE = "invalid escape sequence";
const NESTED_REPETITION = "invalid nested repetition operator";
const REPEAT_COUNT = "invalid repeat count";
const TOO_LARGE = "expression too large";

// Constructs of JavaScript's (and PCRE's) regular expressions that RE2 leaves out because they need
// backtracking, recognised by the error re2js gives and the text it points at.
const UNSUPPORTED_CONSTRUCTS: readonly {
  error: string;
  points: RegExp;
  name: (text: string) => string;
}[] = [
  { error: PERL_SYNTAX, points: /^\(\?=/, name: () => "lookahead (?=...)" },
  { error: PERL_SYNTAX, points: /^\(\?!/, name: () => "negative lookahead (?!...)" },
  { error: NAMED_CAPTURE, points: /^\(\?<=/, name: () => "lookbehind (?<=...)" },
  { error: NAMED_CAPTURE, points: /^\(\?<!/, name: () => "negative lookbehind (?<!...)" },
  { error: PERL_SYNTAX, points: /^\(\?>/, name: () => "atomic group (?>...)" },
  { error: ESCAPE, points: /^\\[1-9]/, name: (text) => `backreference ${text}` },
  { error: ESCAPE, points: /^\\k/, name: () => "named backreference \\k<name>" },
  { error: NESTED_REPETITION, points: /[*+?}]\+$/, name: (text) => `possessive quantifier ${text}` },
];

/**
 * Compiles `source` as the RE2 engine will run it (no flags: a pattern sets its own, as in `(?i)`), or
 * says why it is refused: not RE2 syntax (lookaround, backreferences and other constructs that need
 * backtracking included), or a program too large.
 */
export function compileRe2Pattern(source: string): Re2PatternResult {
  const re2js = loadRe2js();
  let pattern: RE2JS;
  try {
    pattern = re2js.RE2JS.compile(source);
  } catch (error) {
    if (error instanceof re2js.RE2JSException)
      return { ok: false, problem: describeCompileError(re2js, error) };
    throw error;
  }
  const size = pattern.programSize();
  if (size > MAX_RE2_PROGRAM_SIZE) {
    return {
      ok: false,
      problem: `is too large: it compiles to ${size} RE2 instructions, more than ${MAX_RE2_PROGRAM_SIZE}; matching time grows with the program`,
    };
  }
  return { ok: true, pattern };
}

let loaded: typeof Re2js | undefined;

/**
 * re2js, loaded on first use: evaluating it took 1-10 ms of every start, and only writing a policy
 * compiles a pattern. `require` keeps this synchronous; the bundle evaluates the module on first call.
 */
function loadRe2js(): typeof Re2js {
  loaded ??= require("re2js") as typeof Re2js;
  return loaded;
}

function describeCompileError(re2js: typeof Re2js, error: RE2JSException): string {
  if (!(error instanceof re2js.RE2JSSyntaxException)) return `is not RE2 syntax: ${error.message}`;
  const { error: reason, input } = error;
  const unsupported = UNSUPPORTED_CONSTRUCTS.find(
    (candidate) => candidate.error === reason && input !== null && candidate.points.test(input),
  );
  if (unsupported !== undefined) {
    return `is not RE2 syntax: ${unsupported.name(input ?? "")} is not supported; ${LINEAR_TIME}`;
  }
  if (reason === TOO_LARGE) {
    return "is too large for RE2: nested repetitions multiply their counts, and this program would be over RE2's size limit";
  }
  const shown = input === null ? "" : `: \`${input}\``;
  return `is not RE2 syntax: ${reason}${shown}${hintFor(reason, input)}`;
}

function hintFor(reason: string, input: string | null): string {
  if (reason === REPEAT_COUNT) {
    const [, min, max] = /^\{(\d+),(\d+)\}$/.exec(input ?? "") ?? [];
    return min !== undefined && max !== undefined && Number(min) > Number(max)
      ? " (the minimum is above the maximum)"
      : " (RE2 repeats at most 1000 times, nested repetitions multiplied together)";
  }
  if (reason === ESCAPE && input === "\\u") return " (write a code point as \\x{00E9})";
  return "";
}
