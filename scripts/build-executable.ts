/**
 * The one way the executable is built: `npm run build`, the tests and the benchmark all call this, so
 * what is tested and measured is what ships (a `--minify` build once behaved differently from an
 * unminified one).
 */
import { join } from "node:path";
import { $ } from "bun";

const ROOT = join(import.meta.dir, "..");

/**
 * Flags, and why:
 * - `--minify --sourcemap`: the shipped size, with stack traces that still name our files.
 * - `--compile-exec-argv`: Bun's HTTP parser answers a bare 431 with no body to headers over 16 KiB,
 *   before our code sees the request; with room up to 256 KiB the server itself answers an oversized
 *   header with the JSON error body and rate-limit headers (`src/http/plugins/security.ts`).
 * - `--no-compile-autoload-*`: a product must not read a stray `.env` or `bunfig.toml` from the
 *   folder it happens to be started in.
 */
export const BUILD_FLAGS = [
  "--compile",
  "--minify",
  "--sourcemap",
  "--compile-exec-argv=--max-http-header-size=262144",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
];

/** Builds src/main.ts into a standalone executable at `outfile` and returns its path. */
export async function buildExecutable(outfile: string): Promise<string> {
  await $`bun build ${BUILD_FLAGS} src/main.ts --outfile ${outfile}`.cwd(ROOT).quiet();
  return outfile;
}
