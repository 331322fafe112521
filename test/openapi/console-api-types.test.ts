/**
 * The console's API types (src/console/api/schema.d.ts) are generated from the OpenAPI document; a
 * committed copy that no longer matches the API would let the console call a route that changed.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  ANSWER_SCHEMAS_FILE,
  generateAgentAnswerSchemas,
  generateConsoleApiTypes,
  SCHEMA_FILE,
} from "../../scripts/generate-console-api";

test("the console's generated API types match the OpenAPI document (npm run build regenerates them)", async () => {
  expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(await generateConsoleApiTypes());
}, 60_000);

test("the agent's answer schemas match the OpenAPI document (npm run build regenerates them)", async () => {
  expect(readFileSync(ANSWER_SCHEMAS_FILE, "utf8")).toBe(await generateAgentAnswerSchemas());
}, 60_000);
