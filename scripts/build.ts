/** Builds the single executable dist/bulwark (migrations, docs assets and package.json embedded). */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "./build-executable";

const dist = join(import.meta.dir, "..", "dist");
rmSync(dist, { recursive: true, force: true });
const path = await buildExecutable(join(dist, "bulwark"));
const { size } = Bun.file(path);
console.log(`built dist/bulwark (${(size / 1024 / 1024).toFixed(1)} MiB)`);
