/**
 * Automation uses Bulwark through a client generated from its OpenAPI document. This generates one
 * the way a user would (openapi-typescript, then openapi-fetch) from the document the server serves,
 * and type-checks a small client against it: named types (`Device`, `Error`), typed paths and
 * parameters, enums narrow enough that a wrong value does not compile.
 */
import { beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp } from "../helpers/test-app";

// tools/openapi-types: openapi-typescript and the TypeScript 5 it needs (an npm workspace of the project).
const TOOL = join(import.meta.dir, "../../tools/openapi-types");
const GENERATED = join(TOOL, "generated");

const CLIENT = `
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Device = components["schemas"]["Device"];
type ApiError = components["schemas"]["Error"];
type Policy = components["schemas"]["Policy"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080" });

/** A device by id, or why not. */
export async function deviceOrReason(id: string): Promise<Device | ApiError["reason"]> {
  const { data, error } = await client.GET("/api/v1/devices/{id}", { params: { path: { id } } });
  if (error) return error.reason;
  return data;
}

export async function suspend(id: string, reason: string): Promise<string | undefined> {
  const { data } = await client.PUT("/api/v1/devices/{id}/status", {
    params: { path: { id } },
    body: { status: "suspended", reason },
  });
  return data?.status;
}

export async function firstPage(): Promise<number> {
  const { data } = await client.GET("/api/v1/devices", { params: { query: { page: 1, page_size: 100, status: "offline" } } });
  return data?.data.length ?? 0;
}

export const screenshots = (policy: Policy): boolean => policy.policy_data.dlp.screenshot_allowed;
export const status: Device["status"] = "online";
export const known: ApiError["reason"] = "device_not_wiped";
// @ts-expect-error: reasons are a closed list
export const unknownReason: ApiError["reason"] = "something_else";
// @ts-expect-error: not a device status
export const notAStatus: Device["status"] = "exploded";
// @ts-expect-error: page is an integer, not text
export const textPage = () => client.GET("/api/v1/devices", { params: { query: { page: "2" } } });
// @ts-expect-error: no such route
export const noRoute = () => client.GET("/api/v1/no-such-route");
`;

beforeAll(() => {
  if (!existsSync(join(TOOL, "node_modules", ".bin", "openapi-typescript")))
    throw new Error(`${TOOL} is not installed: run npm install (it is a workspace of the project)`);
  mkdirSync(GENERATED, { recursive: true });
});

function run(command: string[]) {
  const result = Bun.spawnSync(command, { cwd: TOOL, env: { PATH: process.env.PATH ?? "" } });
  return { code: result.exitCode, output: result.stdout.toString() + result.stderr.toString() };
}

test("a client generated from the served document type-checks, with named types and narrow enums", async () => {
  const t = await createTestApp();
  const document = await t.request("GET", "/api/v1/openapi.json");
  writeFileSync(join(GENERATED, "openapi.json"), JSON.stringify(document.body));
  const generate = run([
    "node_modules/.bin/openapi-typescript",
    "generated/openapi.json",
    "-o",
    "generated/schema.d.ts",
  ]);
  expect(generate.code, generate.output).toBe(0);
  writeFileSync(join(GENERATED, "client.ts"), CLIENT);
  const check = run([
    "node_modules/.bin/tsc",
    "--noEmit",
    "--strict",
    "--target",
    "es2022",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
    "--skipLibCheck",
    "generated/client.ts",
  ]);
  expect(check.code, check.output).toBe(0);
}, 120_000);
