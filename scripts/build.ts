/** Builds the single executable dist/bulwark (migrations, docs assets and package.json embedded). */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "./build-executable";

/** `--musl`: dist/bulwark-musl as well, for Alpine and other musl systems. */
const withMusl = process.argv.includes("--musl");
const dist = join(import.meta.dir, "..", "dist");
rmSync(dist, { recursive: true, force: true });
const builds: { name: string; musl: boolean }[] = [{ name: "bulwark", musl: false }];
if (withMusl) builds.push({ name: "bulwark-musl", musl: true });
for (const { name, musl } of builds) {
  const path = await buildExecutable(join(dist, name), { musl });
  const { size } = Bun.file(path);
  console.log(`built dist/${name} (${(size / 1024 / 1024).toFixed(1)} MiB)`);
}
