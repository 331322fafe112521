import { expect, test } from "bun:test";
import { join } from "node:path";

test("a test during which the server answers 5xx fails, though its own assertions pass", () => {
  const root = join(import.meta.dir, "../..");
  const run = Bun.spawnSync([process.execPath, "test", "./test/fixtures/provokes-server-error.fixture.ts"], {
    cwd: root,
    env: { ...process.env, TEST_TARGET: "" },
  });
  const output = run.stdout.toString() + run.stderr.toString();
  expect(run.exitCode, output).not.toBe(0);
  expect(output).toContain("the server failed during this test");
  expect(output).toContain("POST /api/v1/auth/login answered 500");
  expect(output).toMatch(/\b1 fail\b/);
}, 60_000);
