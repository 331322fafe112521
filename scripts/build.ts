/**
 * Builds the single executable dist/bulwark (migrations, docs assets, the console and package.json
 * embedded), and the same application for Windows, dist/bulwark-windows-x64.exe, and for macOS,
 * dist/bulwark-darwin-arm64 and dist/bulwark-darwin-x64 (ad-hoc signed), which the server offers beside
 * itself as the Windows and macOS agents (`GET /api/v1/agent/download?os=windows`, `?os=macos&arch=`).
 * The console's API types are regenerated from the OpenAPI document first, so an API change the
 * console does not follow fails `npm run typecheck` (and CI) instead of a page at run time.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable, type CrossTarget } from "./build-executable";
import {
  ANSWER_SCHEMAS_FILE,
  generateAgentAnswerSchemas,
  generateConsoleApiTypes,
  SCHEMA_FILE,
} from "./generate-console-api";

/** `--musl`: dist/bulwark-musl as well, for Alpine and other musl systems. */
const withMusl = process.argv.includes("--musl");
const consoleTypes = await generateConsoleApiTypes();
if (readFileSync(SCHEMA_FILE, "utf8") !== consoleTypes) {
  writeFileSync(SCHEMA_FILE, consoleTypes);
  console.log("updated src/console/api/schema.d.ts from the OpenAPI document");
}
const answerSchemas = await generateAgentAnswerSchemas();
if (readFileSync(ANSWER_SCHEMAS_FILE, "utf8") !== answerSchemas) {
  writeFileSync(ANSWER_SCHEMAS_FILE, answerSchemas);
  console.log("updated src/agent/answer-schemas.generated.ts from the OpenAPI document");
}
const dist = join(import.meta.dir, "..", "dist");
rmSync(dist, { recursive: true, force: true });
const builds: { name: string; target?: CrossTarget }[] = [
  { name: "bulwark" },
  { name: "bulwark-windows-x64.exe", target: "windows-x64" },
  { name: "bulwark-darwin-arm64", target: "darwin-arm64" },
  { name: "bulwark-darwin-x64", target: "darwin-x64" },
];
if (withMusl) builds.push({ name: "bulwark-musl", target: "linux-x64-musl" });
for (const { name, target } of builds) {
  const started = performance.now();
  const path = await buildExecutable(join(dist, name), { target });
  const { size } = Bun.file(path);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`built dist/${name} (${(size / 1024 / 1024).toFixed(1)} MiB, ${seconds} s)`);
}
