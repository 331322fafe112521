/**
 * A conservative static check for regular expressions that could take catastrophic (exponential) time.
 * It knows nothing of policies: the policy validator asks it about each sensitive-data pattern.
 */

/**
 * Why `pattern` (which must already compile, without flags) could backtrack catastrophically, or
 * undefined when the check finds no such shape.
 */
export function findCatastrophicBacktrackingRisk(pattern: string): string | undefined {
  return findCatastrophicBacktracking(new RegexParser(pattern).parse());
}

// A conservative static check on patterns that already compiled (no flags, so not unicode mode). It rejects
// a group repeated more than once (`*`, `+`, `{2,}`, `{20}`) when its body holds an unbounded quantifier,
// as in `(a+)+` or `(.*a){20}`, or when two of its alternatives can start with the same character, as in
// `(a|aa)+`. Both shapes let the engine split the same text in exponentially many ways before failing.

type CharacterRange = readonly [number, number];
type CharacterSet = CharacterRange[];

type RegexNode =
  | { kind: "characters"; set: CharacterSet }
  | { kind: "assertion" }
  | { kind: "backreference" }
  | { kind: "group"; isLookaround: boolean; alternatives: RegexTerm[][] };

interface RegexTerm {
  node: RegexNode;
  min: number;
  max: number;
}

const HIGHEST_CODE_UNIT = 0xffff;
const ANY_CHARACTER: CharacterSet = [[0, HIGHEST_CODE_UNIT]];
const DIGIT: CharacterSet = [[0x30, 0x39]];
const WORD: CharacterSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const WHITESPACE: CharacterSet = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const CLASS_ESCAPES: Record<string, CharacterSet> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: WHITESPACE,
  S: complement(WHITESPACE),
};
const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, f: 0x0c };
const SIMPLE_QUANTIFIERS: Record<string, { min: number; max: number }> = {
  "*": { min: 0, max: Number.POSITIVE_INFINITY },
  "+": { min: 1, max: Number.POSITIVE_INFINITY },
  "?": { min: 0, max: 1 },
};

function findCatastrophicBacktracking(alternatives: RegexTerm[][]): string | undefined {
  for (const term of alternatives.flat()) {
    if (term.node.kind !== "group") continue;
    if (term.max > 1 && !term.node.isLookaround) {
      if (containsUnboundedQuantifier(term.node.alternatives)) return "nested quantifier";
      if (hasOverlappingAlternatives(unwrapGroup(term.node.alternatives))) return "overlapping alternatives";
    }
    const nested = findCatastrophicBacktracking(term.node.alternatives);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

// Lookarounds are atomic in JavaScript, so quantifiers inside them cannot multiply the outer repetition.
function containsUnboundedQuantifier(alternatives: RegexTerm[][]): boolean {
  return alternatives.flat().some((term) => {
    if (term.max === Number.POSITIVE_INFINITY) return true;
    return (
      term.node.kind === "group" &&
      !term.node.isLookaround &&
      containsUnboundedQuantifier(term.node.alternatives)
    );
  });
}

/** `((a|aa))` has the alternatives of `(a|aa)`. */
function unwrapGroup(alternatives: RegexTerm[][]): RegexTerm[][] {
  const only = alternatives.length === 1 ? alternatives[0] : undefined;
  const term = only?.length === 1 ? only[0] : undefined;
  if (term?.node.kind === "group" && !term.node.isLookaround && term.min === 1 && term.max === 1) {
    return unwrapGroup(term.node.alternatives);
  }
  return alternatives;
}

function hasOverlappingAlternatives(alternatives: RegexTerm[][]): boolean {
  const starts = alternatives.map(firstCharacters);
  return starts.some((first, index) =>
    starts
      .slice(index + 1)
      .some((second) => (first.canBeEmpty && second.canBeEmpty) || setsIntersect(first.set, second.set)),
  );
}

interface FirstCharacters {
  set: CharacterSet;
  canBeEmpty: boolean;
}

/** The characters a sequence can start with, and whether it can match the empty string. */
function firstCharacters(sequence: RegexTerm[]): FirstCharacters {
  const set: CharacterSet = [];
  for (const term of sequence) {
    const first = firstCharactersOfNode(term.node);
    set.push(...first.set);
    if (term.min > 0 && !first.canBeEmpty) return { set, canBeEmpty: false };
  }
  return { set, canBeEmpty: true };
}

function firstCharactersOfNode(node: RegexNode): FirstCharacters {
  switch (node.kind) {
    case "characters":
      return { set: node.set, canBeEmpty: false };
    case "assertion":
      return { set: [], canBeEmpty: true };
    case "backreference":
      return { set: ANY_CHARACTER, canBeEmpty: true };
    case "group": {
      if (node.isLookaround) return { set: [], canBeEmpty: true };
      const firsts = node.alternatives.map(firstCharacters);
      return {
        set: firsts.flatMap((first) => first.set),
        canBeEmpty: firsts.some((first) => first.canBeEmpty),
      };
    }
  }
}

function singleCode(set: CharacterSet): number | undefined {
  const [range] = set;
  return set.length === 1 && range !== undefined && range[0] === range[1] ? range[0] : undefined;
}

function setsIntersect(first: CharacterSet, second: CharacterSet): boolean {
  return first.some(([low, high]) =>
    second.some(([otherLow, otherHigh]) => low <= otherHigh && otherLow <= high),
  );
}

function complement(set: CharacterSet): CharacterSet {
  const sorted = [...set].sort((first, second) => first[0] - second[0]);
  const gaps: CharacterRange[] = [];
  let next = 0;
  for (const [low, high] of sorted) {
    if (low > next) gaps.push([next, low - 1]);
    next = Math.max(next, high + 1);
  }
  if (next <= HIGHEST_CODE_UNIT) gaps.push([next, HIGHEST_CODE_UNIT]);
  return gaps;
}

/** Adds the other ASCII case of every letter, for `(?i:...)` groups. */
function withBothCases(set: CharacterSet): CharacterSet {
  const folded: CharacterRange[] = [...set];
  for (const [low, high] of set) {
    for (const [caseLow, caseHigh, shift] of [
      [0x41, 0x5a, 0x20],
      [0x61, 0x7a, -0x20],
    ] as const) {
      const overlapLow = Math.max(low, caseLow);
      const overlapHigh = Math.min(high, caseHigh);
      if (overlapLow <= overlapHigh) folded.push([overlapLow + shift, overlapHigh + shift]);
    }
  }
  return folded;
}

class RegexParser {
  private position = 0;

  constructor(private readonly source: string) {}

  parse(): RegexTerm[][] {
    return this.parseAlternatives(false);
  }

  private parseAlternatives(isIgnoringCase: boolean): RegexTerm[][] {
    const alternatives: RegexTerm[][] = [[]];
    while (this.position < this.source.length && this.peek() !== ")") {
      if (this.peek() === "|") {
        this.position += 1;
        alternatives.push([]);
        continue;
      }
      const node = this.parseAtom(isIgnoringCase);
      const { min, max } = this.parseQuantifier();
      alternatives.at(-1)?.push({ node, min, max });
    }
    return alternatives;
  }

  private parseAtom(isIgnoringCase: boolean): RegexNode {
    const character = this.next();
    switch (character) {
      case "(":
        return this.parseGroup(isIgnoringCase);
      case "[":
        return this.characters(this.parseClass(), isIgnoringCase);
      case ".":
        return { kind: "characters", set: ANY_CHARACTER };
      case "^":
      case "$":
        return { kind: "assertion" };
      case "\\":
        return this.parseAtomEscape(isIgnoringCase);
      default:
        return this.characters([[character.charCodeAt(0), character.charCodeAt(0)]], isIgnoringCase);
    }
  }

  private parseGroup(isIgnoringCase: boolean): RegexNode {
    let isLookaround = false;
    let isGroupIgnoringCase = isIgnoringCase;
    const rest = this.source.slice(this.position);
    const groupName = /^\?<[^>]*>/.exec(rest);
    const modifiers = /^\?([a-z]*)(?:-([a-z]*))?:/.exec(rest);
    if (rest.startsWith("?=") || rest.startsWith("?!")) {
      isLookaround = true;
      this.position += 2;
    } else if (rest.startsWith("?<=") || rest.startsWith("?<!")) {
      isLookaround = true;
      this.position += 3;
    } else if (groupName !== null) {
      this.position += groupName[0].length;
    } else if (modifiers !== null) {
      if (modifiers[1]?.includes("i")) isGroupIgnoringCase = true;
      if (modifiers[2]?.includes("i")) isGroupIgnoringCase = false;
      this.position += modifiers[0].length;
    }
    const alternatives = this.parseAlternatives(isGroupIgnoringCase);
    this.position += 1; // the closing parenthesis
    return { kind: "group", isLookaround, alternatives };
  }

  private parseAtomEscape(isIgnoringCase: boolean): RegexNode {
    const character = this.peek();
    if (character === "b" || character === "B") {
      this.position += 1;
      return { kind: "assertion" };
    }
    if (/[1-9]/.test(character)) {
      while (/[0-9]/.test(this.peek())) this.position += 1;
      return { kind: "backreference" };
    }
    // Without named groups, `\k<x` is a literal in non-unicode mode; only a closed name is a reference.
    const namedReference = /^k<[^>]*>/.exec(this.source.slice(this.position));
    if (namedReference !== null) {
      this.position += namedReference[0].length;
      return { kind: "backreference" };
    }
    return this.characters(this.parseCharacterEscape(), isIgnoringCase);
  }

  /** Parses a bracketed class after its `[`. */
  private parseClass(): CharacterSet {
    const isNegated = this.peek() === "^";
    if (isNegated) this.position += 1;
    const set: CharacterRange[] = [];
    while (this.position < this.source.length && this.peek() !== "]") {
      const low = this.parseClassAtom();
      if (this.peek() !== "-" || this.source[this.position + 1] === "]") {
        set.push(...low);
        continue;
      }
      this.position += 1;
      const high = this.parseClassAtom();
      const lowCode = singleCode(low);
      const highCode = singleCode(high);
      // `[\d-z]` in non-unicode mode is a class escape, a literal hyphen and a character, not a range.
      if (lowCode !== undefined && highCode !== undefined) set.push([lowCode, highCode]);
      else set.push(...low, [0x2d, 0x2d], ...high);
    }
    this.position += 1; // the closing bracket
    return isNegated ? complement(set) : set;
  }

  private parseClassAtom(): CharacterSet {
    const character = this.next();
    if (character !== "\\") return [[character.charCodeAt(0), character.charCodeAt(0)]];
    if (this.peek() === "b") {
      this.position += 1;
      return [[0x08, 0x08]];
    }
    return this.parseCharacterEscape();
  }

  /** Parses what follows a backslash that stands for characters, inside or outside a class. */
  private parseCharacterEscape(): CharacterSet {
    const character = this.next();
    const classEscape = CLASS_ESCAPES[character];
    if (classEscape !== undefined) return classEscape;
    const code = this.parseEscapedCode(character);
    return [[code, code]];
  }

  private parseEscapedCode(character: string): number {
    const controlEscape = CONTROL_ESCAPES[character];
    if (controlEscape !== undefined) return controlEscape;
    const rest = this.source.slice(this.position);
    const hex = (character === "x" ? /^[0-9a-f]{2}/i : character === "u" ? /^[0-9a-f]{4}/i : undefined)?.exec(
      rest,
    );
    if (hex) {
      this.position += hex[0].length;
      return Number.parseInt(hex[0], 16);
    }
    if (character === "c" && /^[a-z]/i.test(rest)) {
      this.position += 1;
      return rest.charCodeAt(0) % 32;
    }
    if (/[0-7]/.test(character)) {
      const octal = /^[0-7]{0,2}/.exec(rest)?.[0] ?? "";
      this.position += octal.length;
      return Number.parseInt(character + octal, 8);
    }
    return character.charCodeAt(0);
  }

  private parseQuantifier(): { min: number; max: number } {
    const bounds = this.parseQuantifierBounds();
    if (bounds !== undefined && this.peek() === "?") this.position += 1; // lazy ones backtrack the same way
    return bounds ?? { min: 1, max: 1 };
  }

  private parseQuantifierBounds(): { min: number; max: number } | undefined {
    const character = this.peek();
    const simple = SIMPLE_QUANTIFIERS[character];
    if (simple !== undefined) {
      this.position += 1;
      return simple;
    }
    // A `{` that does not form a quantifier is a literal character in non-unicode mode.
    const braces = character === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.position)) : null;
    if (braces === null) return undefined;
    this.position += braces[0].length;
    const min = Number(braces[1]);
    if (braces[2] === undefined) return { min, max: min };
    return { min, max: braces[3] ? Number(braces[3]) : Number.POSITIVE_INFINITY };
  }

  private characters(set: CharacterSet, isIgnoringCase: boolean): RegexNode {
    return { kind: "characters", set: isIgnoringCase ? withBothCases(set) : set };
  }

  private peek(): string {
    return this.source[this.position] ?? "";
  }

  private next(): string {
    const character = this.peek();
    this.position += 1;
    return character;
  }
}
