import { describe, expect, test } from "bun:test";
import { isNestedDeeperThan } from "../../src/lib/json-nesting";

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("isNestedDeeperThan", () => {
  test("counts arrays and objects alike, up to the limit inclusive", () => {
    expect(isNestedDeeperThan(nested(64), 64)).toBe(false);
    expect(isNestedDeeperThan(nested(65), 64)).toBe(true);
    expect(isNestedDeeperThan('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    expect(isNestedDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
  });

  test("brackets inside strings, escaped quotes included, do not count", () => {
    const text = JSON.stringify({ text: `${"[".repeat(500)} \\" ${"{".repeat(500)}` });
    expect(isNestedDeeperThan(text, 2)).toBe(false);
  });

  test("siblings do not add up: depth is nesting, not count", () => {
    expect(isNestedDeeperThan(`[${Array(1000).fill("[1]").join(",")}]`, 2)).toBe(false);
  });
});
