/**
 * The musl variant (`npm run build:musl`, dist/bulwark-musl) for Alpine and other musl systems, built by
 * the same function as dist/bulwark. No musl system with libstdc++ is available on our build machines,
 * so it is checked as a file here: a musl executable that carries the whole application.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../../scripts/build-executable";

test("npm run build:musl makes a musl executable of the same application", async () => {
  const musl = await buildExecutable(join(mkdtempSync(join(tmpdir(), "bulwark-musl-")), "bulwark-musl"), {
    target: "linux-x64-musl",
  });
  const headers = Bun.spawnSync(["readelf", "--program-headers", "--dynamic", musl]).stdout.toString();
  expect(headers).toContain("[Requesting program interpreter: /lib/ld-musl-x86_64.so.1]");
  const needed = [...headers.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((match) => match[1]);
  // What an Alpine machine needs: musl, and `apk add libstdc++` (docs/production.md says so).
  expect(needed.sort()).toEqual(["libc.musl-x86_64.so.1", "libstdc++.so.6"]);
  const bytes = readFileSync(musl);
  // The application inside: its migrations, its metrics and its example configuration.
  for (const embedded of [
    "0005_gdpr_anonymous_label",
    "bulwark_http_requests_total",
    "# Bulwark configuration.",
  ])
    expect({ embedded, found: bytes.includes(embedded) }).toEqual({ embedded, found: true });
}, 180_000);
