/**
 * docs/platforms.md says per platform what the agents' and phones' tables say, word for word: it is
 * written from them (scripts/generate-platform-docs.ts), and this fails when a table changed without it.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PLATFORM_DOCS, platformDocs } from "../../scripts/generate-platform-docs";
import { IOS_SUPPORT } from "../../src/agent/enforce/phone-support";

test("docs/platforms.md is what the support tables say (bun run scripts/generate-platform-docs.ts)", () => {
  const written = readFileSync(PLATFORM_DOCS, "utf8");
  expect(written).toBe(platformDocs());
  // And it says it in the tables' words: a reason in the file is the reason the console shows.
  expect(written).toContain(IOS_SUPPORT["dlp.screenshot_allowed"].how);
});
