import { describe, expect, test } from "bun:test";
import { compileRe2Pattern, MAX_RE2_PROGRAM_SIZE } from "../../src/lib/re2-pattern";

function compiled(source: string) {
  const result = compileRe2Pattern(source);
  if (!result.ok) throw new Error(`expected ${source} to compile, got: ${result.problem}`);
  return result.pattern;
}

function problemOf(source: string): string {
  const result = compileRe2Pattern(source);
  if (result.ok) throw new Error(`expected ${source} to be refused`);
  return result.problem;
}

describe("patterns that make a backtracking engine take exponential time", () => {
  // Each would take a backtracking engine (JavaScript's RegExp) seconds to years on the failing inputs.
  test("\\d*\\d*...x answers on 50,000 digits, with and without the x", () => {
    const pattern = compiled(`${"\\d*".repeat(10)}x`);
    const digits = "1".repeat(50_000);
    expect(pattern.test(digits)).toBe(false);
    expect(pattern.test(`${digits}x`)).toBe(true);
    expect(pattern.test(`${digits}y`)).toBe(false);
  });

  test("a repeated group of a repetition answers on 29 characters and on 10,000, and counts right", () => {
    // The nested form of the 15.7 s case, within RE2's limit: at most 10 x 100 = 1000 a's in all.
    const pattern = compiled("^(a{1,10}){1,100}$");
    expect(pattern.test(`${"a".repeat(28)}!`)).toBe(false);
    expect(pattern.test("a".repeat(29))).toBe(true);
    expect(pattern.test("a".repeat(1000))).toBe(true);
    expect(pattern.test("a".repeat(1001))).toBe(false);
    expect(pattern.test(`${"a".repeat(10_000)}!`)).toBe(false);
  });

  test("(a+)+$ and ^(a|aa)+$ answer on 50,000 characters", () => {
    const nested = compiled("(a+)+$");
    const overlapping = compiled("^(a|aa)+$");
    const as = "a".repeat(50_000);
    expect(nested.test(`${as}!`)).toBe(false);
    expect(nested.test(`x${as}`)).toBe(true);
    expect(overlapping.test(as)).toBe(true);
    expect(overlapping.test(`${as}b`)).toBe(false);
  });
});

describe("what RE2 refuses", () => {
  test("nested repetitions whose counts multiply past RE2's limit", () => {
    expect(problemOf("^(a{1,1000}){1,1000}$")).toBe(
      "is too large for RE2: nested repetitions multiply their counts, and this program would be over RE2's size limit",
    );
    expect(problemOf("((a{2}){100}){10}")).toBe(
      "is not RE2 syntax: invalid repeat count: `{10}` (RE2 repeats at most 1000 times, nested repetitions multiplied together)",
    );
  });

  test("a count over 1000, or a minimum above the maximum", () => {
    expect(problemOf("\\d{1001}")).toBe(
      "is not RE2 syntax: invalid repeat count: `{1001}` (RE2 repeats at most 1000 times, nested repetitions multiplied together)",
    );
    expect(problemOf("\\d{5,2}")).toBe(
      "is not RE2 syntax: invalid repeat count: `{5,2}` (the minimum is above the maximum)",
    );
  });

  test(`a program of more than ${MAX_RE2_PROGRAM_SIZE} instructions`, () => {
    expect(compiled(".{1000}".repeat(9)).programSize()).toBeLessThanOrEqual(MAX_RE2_PROGRAM_SIZE);
    expect(problemOf(".{1000}".repeat(11))).toBe(
      `is too large: it compiles to 11002 RE2 instructions, more than ${MAX_RE2_PROGRAM_SIZE}; matching time grows with the program`,
    );
  });

  test.each([
    ["\\d{3}(?=-)", "lookahead (?=...)"],
    ["\\d{3}(?!-)", "negative lookahead (?!...)"],
    ["(?<=\\$)\\d+", "lookbehind (?<=...)"],
    ["(?<!\\$)\\d+", "negative lookbehind (?<!...)"],
    ["(?>a+)b", "atomic group (?>...)"],
    ["(\\w)\\1", "backreference \\1"],
    ["(?<c>\\w)\\k<c>", "named backreference \\k<name>"],
    ["\\d++", "possessive quantifier ++"],
  ])("%p: a construct that needs backtracking", (source, construct) => {
    expect(problemOf(source)).toBe(
      `is not RE2 syntax: ${construct} is not supported; patterns run on a linear-time engine`,
    );
  });

  test("other syntax errors say what and where, as RE2 does", () => {
    expect(problemOf("([a-z")).toBe("is not RE2 syntax: missing closing ]: `[a-z`");
    expect(problemOf("\\u00e9")).toBe(
      "is not RE2 syntax: invalid escape sequence: `\\u` (write a code point as \\x{00E9})",
    );
    expect(problemOf("a\\")).toBe("is not RE2 syntax: trailing backslash at end of expression");
  });
});

describe("RE2 syntax", () => {
  test("flags, classes and escapes of RE2 compile and match", () => {
    expect(compiled("(?i)confidential").test("CONFIDENTIAL report")).toBe(true);
    expect(compiled("[[:upper:]]{2}\\d{2}").test("DE44")).toBe(true);
    expect(compiled("\\p{Greek}+").test("αβγ")).toBe(true);
    expect(compiled("\\x{20AC}\\d+").test("price €25")).toBe(true);
    expect(compiled("(?P<year>\\d{4})-\\d{2}").test("2024-05")).toBe(true);
  });

  test("any text gets an answer: compiled or refused, never an exception", () => {
    let seed = 42;
    const nextRandom = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const alphabet = "()[]{}|*+?.\\^$-,:=!<>PkabdwsuxcQE0123";
    for (let sample = 0; sample < 2_000; sample += 1) {
      const length = 1 + Math.floor(nextRandom() * 14);
      const source = Array.from({ length }, () => alphabet[Math.floor(nextRandom() * alphabet.length)]).join(
        "",
      );
      const result = compileRe2Pattern(source);
      if (result.ok) expect(typeof result.pattern.test("ab12")).toBe("boolean");
      else expect(result.problem).toMatch(/^is (not RE2 syntax|too large)/);
    }
  });
});
