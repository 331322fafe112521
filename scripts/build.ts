/** Builds the single executable dist/bulwark (migrations, docs assets and package.json embedded). */
import { $ } from "bun";

await $`rm -rf dist && mkdir -p dist`;
await $`bun build --compile --minify --sourcemap src/main.ts --outfile dist/bulwark`;
const { size } = Bun.file("dist/bulwark");
console.log(`built dist/bulwark (${(size / 1024 / 1024).toFixed(1)} MiB)`);
