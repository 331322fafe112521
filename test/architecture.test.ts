/**
 * The arrow of ARCHITECTURE.md, enforced: http and jobs import domain; domain imports db, config and
 * lib; db imports lib. Never the other way. A file that breaks the rule fails this test by name.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "../src");

/**
 * Folders (under src/) and what they may not import: other folders of src/, or packages. `typesAllowed`:
 * an `import type` of those folders is fine (it leaves nothing in the built code).
 */
const FORBIDDEN: Record<string, { folders: string[]; packages: string[]; typesAllowed?: boolean }> = {
  domain: { folders: ["http", "jobs", "cli"], packages: ["elysia", "@elysiajs/openapi"] },
  db: { folders: ["domain", "http", "jobs", "cli"], packages: ["elysia"] },
  lib: { folders: ["domain", "db", "http", "jobs", "cli", "config"], packages: ["elysia"] },
  jobs: { folders: ["http", "cli"], packages: ["elysia"] },
  config: { folders: ["domain", "db", "http", "jobs", "cli"], packages: ["elysia"] },
  // The device agent runs on laptops and talks to the server only through the public agent API: it
  // loads no server code (types, erased at build, may be shared: the policy document, the API's).
  agent: {
    folders: ["domain", "db", "http", "jobs", "cli", "config", "console", "boot", "app"],
    packages: ["elysia", "@elysiajs/openapi", "drizzle-orm", "bun:sqlite"],
    typesAllowed: true,
  },
  // The VPN peer sync runs on the WireGuard server and knows the server only through GET /vpn/peers.
  "vpn-sync": {
    folders: ["domain", "db", "http", "jobs", "cli", "config", "console", "boot", "app"],
    packages: ["elysia", "@elysiajs/openapi", "drizzle-orm", "bun:sqlite"],
    typesAllowed: true,
  },
};

/** Every import of every .ts file below `folder`, as [file, imported specifier, whether type-only]. */
function importsOf(folder: string): [string, string, boolean?][] {
  const found: [string, string, boolean?][] = [];
  for (const entry of readdirSync(folder, { recursive: true }).map(String)) {
    if (!entry.endsWith(".ts")) continue;
    const file = join(folder, entry);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:^|\n)\s*((?:import|export)\b[^;'"]*?)from\s+["']([^"']+)["']/g))
      found.push([file, match[2] as string, /^(?:import|export)\s+type\b/.test(match[1] as string)]);
    for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g))
      found.push([file, match[1] as string]);
  }
  return found;
}

/** The violations of the rules among `imports`, as "file imports specifier". */
function violations(imports: [string, string, boolean?][], root = SRC): string[] {
  const broken: string[] = [];
  for (const [file, specifier, typeOnly] of imports) {
    const area = relative(root, file).split("/")[0] ?? "";
    const rule = FORBIDDEN[area];
    if (!rule || (typeOnly && rule.typesAllowed)) continue;
    if (specifier.startsWith(".")) {
      const target = relative(root, join(file, "..", specifier)).split("/")[0] ?? "";
      if (rule.folders.includes(target)) broken.push(`${relative(root, file)} imports ${specifier}`);
    } else if (rule.packages.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
      broken.push(`${relative(root, file)} imports ${specifier}`);
    }
  }
  return broken;
}

test("no import goes against the arrow", () => {
  expect(violations(importsOf(SRC))).toEqual([]);
});

test("the rule catches a planted import: a domain file importing elysia or http, the agent loading server code", () => {
  const planted: [string, string, boolean?][] = [
    [join(SRC, "domain/devices/planted.ts"), "elysia"],
    [join(SRC, "domain/devices/planted.ts"), "../../http/plugins/security"],
    [join(SRC, "lib/planted.ts"), "../domain/errors"],
    [join(SRC, "jobs/planted.ts"), "../http/app-deps"],
    [join(SRC, "agent/enforce/planted.ts"), "../../domain/policies/policy-document"],
    [join(SRC, "agent/enforce/planted.ts"), "../../domain/policies/policy-document", true],
    [join(SRC, "agent/facts/planted.ts"), "../../db/client"],
    [join(SRC, "agent/planted.ts"), "drizzle-orm"],
  ];
  expect(violations(planted)).toEqual([
    "domain/devices/planted.ts imports elysia",
    "domain/devices/planted.ts imports ../../http/plugins/security",
    "lib/planted.ts imports ../domain/errors",
    "jobs/planted.ts imports ../http/app-deps",
    "agent/enforce/planted.ts imports ../../domain/policies/policy-document",
    "agent/facts/planted.ts imports ../../db/client",
    "agent/planted.ts imports drizzle-orm",
  ]);
});

test("docs and comments cite only what a clone of the repository holds, never the product's private specification files", () => {
  const root = join(import.meta.dir, "..");
  // Spelt in two parts so that this file does not match itself.
  const outside = new RegExp(`\\b(?:${"SPEC"}|${"CONTRACT"})\\.md\\b`);
  const tracked = Bun.spawnSync(["git", "ls-files"], { cwd: root }).stdout.toString().trim().split("\n");
  expect(tracked.length).toBeGreaterThan(100);
  const citing = tracked.filter(
    (file) =>
      /\.(ts|tsx|md|toml|cfg|conf|service|html|css|json)$|Dockerfile/.test(file) &&
      !file.startsWith("migrations/meta/") &&
      outside.test(readFileSync(join(root, file), "utf8")),
  );
  expect(citing).toEqual([]);
});

/**
 * What only SQLite understands lives in src/db/sqlite (the hot statements, the planner workarounds, the
 * connection), so that PostgreSQL gets its own implementation of each piece instead of inheriting SQLite
 * SQL. The domain reaches them through src/db/lookups.ts, which picks the store's implementation.
 */
const SQLITE_ONLY = [
  /from\s+["']bun:sqlite["']/,
  /db\/sqlite\/prepared["']/,
  /\bconnectionOf\(/,
  /\breadTogether\(/,
  /\bpreparedRead\(/,
  /\boncePerDatabase\(/,
  /\bunplanned\(/,
  /\bLIMIT_ONE\b/,
  /\bjson_each\b|\bjson_extract\b/,
];
const STORE_SPECIFIC_IMPORT =
  /from\s+["'](?:\.\.\/)+db\/(?:sqlite|pg)\/|from\s+["'](?:\.\.\/)+db\/schema(?:-pg)?["']/;

test("SQLite-only code and either store's own modules stay out of src/domain: it reaches them through src/db/lookups.ts and src/db/tables.ts", () => {
  const domain = join(SRC, "domain");
  const holding = readdirSync(domain, { recursive: true })
    .map(String)
    .filter((entry) => entry.endsWith(".ts"))
    .filter((entry) => {
      const text = readFileSync(join(domain, entry), "utf8");
      return SQLITE_ONLY.some((pattern) => pattern.test(text)) || STORE_SPECIFIC_IMPORT.test(text);
    });
  expect(holding).toEqual([]);
});
