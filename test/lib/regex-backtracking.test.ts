import { describe, expect, test } from "bun:test";
import { findCatastrophicBacktrackingRisk } from "../../src/lib/regex-backtracking";

describe("findCatastrophicBacktrackingRisk", () => {
  test("flags nested unbounded repetition and overlapping repeated alternatives", () => {
    for (const pattern of ["(a+)+", "(.*a){20}", "(a|aa)+", "(x+x+)+y", "((ab)*)+"])
      expect({ pattern, risk: findCatastrophicBacktrackingRisk(pattern) !== undefined }).toEqual({
        pattern,
        risk: true,
      });
  });

  test("accepts the patterns DLP rules are made of", () => {
    for (const pattern of [
      "\\b\\d{3}-\\d{2}-\\d{4}\\b",
      "[A-Z]{2}\\d{2}[A-Z0-9]{11,30}",
      "(?:\\d{4}[ -]?){3}\\d{4}",
      "secret|confidential",
    ])
      expect({ pattern, risk: findCatastrophicBacktrackingRisk(pattern) }).toEqual({
        pattern,
        risk: undefined,
      });
  });
});
