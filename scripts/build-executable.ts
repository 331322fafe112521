/**
 * The one way the executable is built: `npm run build`, the tests and the benchmark all call this, so
 * what is tested and measured is what ships (a `--minify` build once behaved differently from an
 * unminified one).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { $ } from "bun";
import { ensureAdHocSignature } from "./macho-codesign";

const ROOT = join(import.meta.dir, "..");

/**
 * Flags, and why:
 * - `--minify --sourcemap`: the shipped size, with stack traces that still name our files.
 * - `--compile-exec-argv`: Bun's HTTP parser answers a bare 431 with no body to headers over 16 KiB,
 *   before our code sees the request; with room up to 256 KiB the server itself answers an oversized
 *   header with the JSON error body and rate-limit headers (`src/http/plugins/security.ts`).
 * - `--no-compile-autoload-*`: a product must not read a stray `.env` or `bunfig.toml` from the
 *   folder it happens to be started in.
 * - `--bytecode --format=esm`: the bundle ships as JavaScriptCore bytecode, not source to parse at every
 *   start: `bulwark --version` went from ~170 ms to ~50 ms and a cold start to the first authenticated
 *   200 from ~400 ms to ~210 ms (issue 17). ESM because bytecode defaults to CommonJS, which has no
 *   top-level await.
 */
export const BUILD_FLAGS = [
  "--compile",
  "--minify",
  "--sourcemap",
  "--compile-exec-argv=--max-http-header-size=262144",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--bytecode",
  "--format=esm",
];

/**
 * The other systems an executable is built for, each with Bun's runtime for it (`bun build --target`):
 * the npm package of that runtime, of the same version as the bun that builds, from the npm registry
 * (the one registry our build machines reach; Bun would otherwise download it from GitHub).
 */
const CROSS_TARGETS = {
  /** Alpine and other musl systems (dist/bulwark-musl). */
  "linux-x64-musl": { package: "@oven/bun-linux-x64-musl", runtime: "bin/bun" },
  /** Windows 10 and later, x64 (dist/bulwark-windows-x64.exe: the agent for Windows). */
  "windows-x64": { package: "@oven/bun-windows-x64", runtime: "bin/bun.exe" },
  /**
   * macOS 13 and later (the runtime's LC_BUILD_VERSION minos) on Apple silicon and on Intel
   * (dist/bulwark-darwin-arm64, dist/bulwark-darwin-x64: the agent for Macs). Their code signature is
   * checked after the build, and made again when Bun left it stale (scripts/macho-codesign.ts).
   */
  "darwin-arm64": { package: "@oven/bun-darwin-aarch64", runtime: "bin/bun" },
  "darwin-x64": { package: "@oven/bun-darwin-x64", runtime: "bin/bun" },
} as const;

export type CrossTarget = keyof typeof CROSS_TARGETS;

/**
 * Builds src/main.ts (or `entry`: a benchmark's baseline) into a standalone executable at `outfile` and
 * returns its path: for the build machine's own system, or for `target` (CROSS_TARGETS).
 */
export async function buildExecutable(
  outfile: string,
  options: { target?: CrossTarget; entry?: string } = {},
): Promise<string> {
  const cross = options.target
    ? [
        `--target=bun-${options.target}`,
        `--compile-executable-path=${await npmRuntime(CROSS_TARGETS[options.target])}`,
      ]
    : [];
  await $`bun build ${BUILD_FLAGS} ${cross} ${options.entry ?? "src/main.ts"} --outfile ${outfile}`
    .cwd(ROOT)
    .quiet();
  // macOS kills an executable whose signature does not match it: Bun re-signs its arm64 output, not
  // the x64 one, which keeps the runtime's signature of other bytes.
  if (options.target?.startsWith("darwin-")) ensureAdHocSignature(outfile);
  return outfile;
}

/**
 * Bun's runtime for another system (`@oven/bun-linux-x64-musl`, `@oven/bun-darwin-x64`, ...), of the
 * version of the bun that builds, fetched with `npm pack` once into node_modules/.cache: npm will not
 * install it on this machine (its package declares another os, cpu or libc).
 */
async function npmRuntime({ package: name, runtime }: { package: string; runtime: string }): Promise<string> {
  const version = (await $`bun --version`.cwd(ROOT).text()).trim();
  const folder = join(ROOT, "node_modules", ".cache", `${name.replace("@oven/", "")}-${version}`);
  const path = join(folder, "package", runtime);
  if (existsSync(path)) return path;
  mkdirSync(folder, { recursive: true });
  const packed = (
    await $`npm pack --silent ${name}@${version} --pack-destination ${folder}`.cwd(folder).text()
  ).trim();
  await $`tar -xzf ${packed.split("\n").at(-1) ?? ""}`.cwd(folder).quiet();
  if (!existsSync(path)) throw new Error(`npm pack of ${name}@${version} has no ${runtime}`);
  return path;
}
