/**
 * A probe derived from our own OpenAPI document, against the built executable: for every operation it
 * sends values just outside every minimum, maximum, length, enum, format and type the document
 * declares, missing required fields, unknown fields, deep nesting, malformed JSON and wrong content
 * types, with made-up ids and with real ones. No answer may be a 5xx, and every refusal must be the
 * error body. New routes are probed as soon as they are in the document.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callServer, executablePath, type RunningServer, startServer } from "../helpers/binary";
import { resolveSchema, type Schema, sampleValue } from "../helpers/openapi-sample";

interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string; required?: boolean; schema: Schema }[];
  body: Schema | null;
}
interface Probe {
  method: string;
  path: string;
  body?: string;
  contentType?: string;
  credential: "admin" | "device" | "throwawayDevice" | "throwaway" | "bystander" | "none";
  what: string;
  headers?: Record<string, string>;
}

const PASSWORD = "probe-password-1234";
let server: RunningServer;
let document: {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, Schema> };
};
const credentials: Record<"admin" | "device" | "throwawayDevice" | "throwaway" | "bystander", string> = {
  admin: "",
  device: "",
  throwawayDevice: "",
  throwaway: "",
  bystander: "",
};
/** Operations that end the caller's session: probed with a second session, so the probe keeps its own. */
const SESSION_ENDING = new Set(["/api/v1/auth/logout", "/api/v1/users/me/password"]);
/**
 * Agent operations that end the device's credential (unenroll, token rotation): probed as a second
 * device, so the probe's own device keeps reaching past authentication.
 */
const DEVICE_ENDING = new Set(["/api/v1/agent/device", "/api/v1/agent/token"]);
/** Operations that end the caller's account (erasure, restriction): probed as a second admin, a bystander. */
const ACCOUNT_ENDING = new Set(["/api/v1/gdpr/delete", "/api/v1/gdpr/restrict"]);
/** Real ids, by the resource a path names, so that probes also reach the code past the 404. */
const realIds: Record<string, string> = {};

/** A request of the probe's setup, which must succeed. */
function call(method: string, path: string, body?: unknown, token?: string) {
  return callServer(server, method, path, token, body);
}

beforeAll(async () => {
  server = await startServer(await executablePath(), mkdtempSync(join(tmpdir(), "bulwark-probe-")), {
    BULWARK_ADMIN_EMAIL: "probe@example.com",
    BULWARK_ADMIN_PASSWORD: PASSWORD,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    BULWARK_RATE_LIMIT_AUTHENTICATED_PER_MINUTE: "10000000",
    BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "10000000",
    BULWARK_RATE_LIMIT_ENROLLMENTS_PER_MINUTE: "10000000",
    BULWARK_AUTH_LOGIN_MAX_FAILURES: "1000000",
    BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  });
  const login = await call("POST", "/api/v1/auth/login", { email: "probe@example.com", password: PASSWORD });
  credentials.admin = login.token;
  credentials.throwaway = (
    await call("POST", "/api/v1/auth/login", { email: "probe@example.com", password: PASSWORD })
  ).token;
  const admin = credentials.admin;
  realIds.users = (
    await call(
      "POST",
      "/api/v1/users",
      { email: "member@example.com", name: "Member", role: "member", password: PASSWORD },
      admin,
    )
  ).id;
  await call(
    "POST",
    "/api/v1/users",
    { email: "bystander@example.com", name: "Bystander", role: "admin", password: PASSWORD },
    admin,
  );
  credentials.bystander = (
    await call("POST", "/api/v1/auth/login", { email: "bystander@example.com", password: PASSWORD })
  ).token;
  realIds.policies = (await call("POST", "/api/v1/policies", { name: "Probe policy" }, admin)).id;
  const enrollment = await call("POST", "/api/v1/enrollment-tokens", { max_uses: null }, admin);
  realIds["enrollment-tokens"] = enrollment.id;
  const enroll = (name: string) =>
    call("POST", "/api/v1/devices/enroll", {
      enrollment_token: enrollment.token,
      device_name: name,
      platform: "linux",
      agent_version: "1.0.0",
      hardware_id: `HW-${crypto.randomUUID()}`,
    });
  const device = await enroll("Probe laptop");
  realIds.devices = device.id;
  credentials.device = device.device_token;
  credentials.throwawayDevice = (await enroll("Probe laptop that leaves")).device_token;
  const wiped = await enroll("Probe laptop to wipe");
  realIds.wipe_id = (
    await call("POST", `/api/v1/devices/${wiped.id}/wipe`, { reason: "probe" }, admin)
  ).wipe_id;
  realIds.webhooks = (
    await call(
      "POST",
      "/api/v1/webhooks",
      { url: "http://127.0.0.1:9/hook", events: ["*"], secret: "probe-secret-0123456789" },
      admin,
    )
  ).id;
  realIds["api-keys"] = (
    await call("POST", "/api/v1/auth/api-keys", { name: "probe", scopes: ["devices:read"] }, admin)
  ).id;
  realIds.enrollmentToken = enrollment.token;
  document = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as typeof document;
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

function resolve(schema: Schema | undefined): Schema {
  return resolveSchema(document, schema);
}

/** The reasons the document's Error schema lists. */
function documentedReasons(): Set<string> {
  const reason = resolve(document.components?.schemas?.Error).properties?.reason ?? {};
  const values = reason.enum ?? ((reason.anyOf ?? []) as Schema[]).map((variant) => variant.const);
  return new Set((values as unknown[]).map(String));
}

function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const content = operation.requestBody?.content ?? {};
      const body = content["application/json"]?.schema ?? null;
      found.push({ method: method.toUpperCase(), path, parameters: operation.parameters ?? [], body });
    }
  }
  return found;
}

/** A value the schema accepts; real ids and the enrollment token where the document cannot know them. */
function sample(raw: Schema, name = ""): unknown {
  return sampleValue(
    document,
    raw,
    (field, schema) => {
      if (field === "enrollment_token") return realIds.enrollmentToken;
      if (schema.format === "uuid") return realIds.policies;
      return undefined;
    },
    name,
  );
}

/** Values just outside what the schema accepts, each with a word on what it is. */
function badValues(raw: Schema): [string, unknown][] {
  const schema = resolve(raw);
  const values: [string, unknown][] = [
    ["null", null],
    ["a number", 12345],
    ["a string", "probe-text"],
    ["a boolean", false],
    ["an array", ["probe"]],
    ["an object", { probe: 1 }],
  ];
  const type = schema.type;
  if (type === "string" || schema.format) {
    values.push(
      ["empty", ""],
      ["blank", "   "],
      ["a NUL character", "a\u0000b"],
      ["10 KB of text", "x".repeat(10_000)],
      ["an unpaired surrogate", "a\ud800b"],
    );
    if (typeof schema.minLength === "number" && schema.minLength > 0)
      values.push(["under minLength", "x".repeat(schema.minLength - 1)]);
    if (typeof schema.maxLength === "number")
      values.push(["over maxLength", "x".repeat(schema.maxLength + 1)]);
    if (schema.format) values.push([`not a ${schema.format}`, `not-a-${schema.format}`]);
    if (schema.format === "uuid") values.push(["an upper-case real id", realIds.policies?.toUpperCase()]);
  }
  if (type === "integer" || type === "number") {
    values.push(["a fraction", 1.5], ["past 2^53", 2 ** 53 + 2], ["negative", -1], ["huge", 1e308]);
    if (typeof schema.minimum === "number") values.push(["under minimum", schema.minimum - 1]);
    if (typeof schema.maximum === "number") values.push(["over maximum", schema.maximum + 1]);
  }
  if (Array.isArray(schema.enum) || (schema.anyOf ?? []).some((variant: Schema) => "const" in variant))
    values.push(["not in the enum", "zz-not-a-value"]);
  if (type === "array") {
    if (typeof schema.maxItems === "number")
      values.push([
        "over maxItems",
        Array.from({ length: schema.maxItems + 1 }, () => sample(schema.items ?? {})),
      ]);
    if (typeof schema.minItems === "number" && schema.minItems > 0) values.push(["under minItems", []]);
    values.push(["items of the wrong type", [{ probe: [1] }, 7]]);
  }
  return values;
}

/** Bodies with one field at a time made bad, down to nested objects (policy documents). */
function bodyMutations(schema: Schema, base: unknown, path: string[] = [], depth = 0): [string, unknown][] {
  const resolved = resolve(schema);
  const variants = resolved.anyOf ?? resolved.oneOf;
  const target = Array.isArray(variants)
    ? resolve(variants.find((variant: Schema) => variant.type === "object") ?? {})
    : resolved;
  if (target.type !== "object" || !target.properties || depth > 3) return [];
  const mutations: [string, unknown][] = [];
  const at = (change: (object: Record<string, unknown>) => void): unknown => {
    const copy = structuredClone(base) as Record<string, unknown>;
    let object = copy;
    for (const key of path) {
      if (typeof object[key] !== "object" || object[key] === null || Array.isArray(object[key]))
        object[key] = {};
      object = object[key] as Record<string, unknown>;
    }
    change(object);
    return copy;
  };
  const where = path.length ? `${path.join(".")}.` : "";
  mutations.push([`${where}<unknown field>`, at((object) => Object.assign(object, { zz_unknown: 1 }))]);
  for (const [key, property] of Object.entries(target.properties as Record<string, Schema>)) {
    if ((target.required ?? []).includes(key))
      mutations.push([`${where}${key} missing`, at((object) => delete object[key])]);
    for (const [word, value] of badValues(property))
      mutations.push([`${where}${key}: ${word}`, at((object) => Object.assign(object, { [key]: value }))]);
    const nested = `${"[".repeat(70)}${"]".repeat(70)}`;
    mutations.push([
      `${where}${key}: nested 70 deep`,
      at((object) => Object.assign(object, { [key]: JSON.parse(nested) })),
    ]);
    mutations.push(...bodyMutations(property, base, [...path, key], depth + 1));
  }
  return mutations;
}

function pathFor(operation: Operation, useRealIds: boolean, override?: [string, string]): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (override && override[0] === name) return encodeURIComponent(override[1]);
    if (name === "version") return "1";
    if (!useRealIds) return crypto.randomUUID();
    if (name === "wipe_id") return realIds.wipe_id ?? crypto.randomUUID();
    const resource = Object.keys(realIds).find((key) => operation.path.includes(`/${key}/`));
    return (resource && realIds[resource]) || crypto.randomUUID();
  });
}

function probesFor(operation: Operation): Probe[] {
  const credential: Probe["credential"] = DEVICE_ENDING.has(operation.path)
    ? "throwawayDevice"
    : operation.path.startsWith("/api/v1/agent/")
      ? "device"
      : operation.path === "/api/v1/devices/enroll"
        ? "none"
        : SESSION_ENDING.has(operation.path)
          ? "throwaway"
          : ACCOUNT_ENDING.has(operation.path)
            ? "bystander"
            : "admin";
  const probes: Probe[] = [];
  const add = (
    what: string,
    path: string,
    body?: string,
    contentType = "application/json",
    headers?: Record<string, string>,
  ) => probes.push({ method: operation.method, path, body, contentType, credential, what, headers });
  const hasPathIds = operation.path.includes("{");
  for (const useRealIds of hasPathIds ? [false, true] : [false]) {
    const path = pathFor(operation, useRealIds);
    const base = operation.body ? sample(operation.body) : undefined;
    const baseText = base === undefined ? undefined : JSON.stringify(base);
    if (operation.body) {
      for (const [what, body] of bodyMutations(operation.body, base))
        add(`body ${what}`, path, JSON.stringify(body));
    }
    // Whatever the route declares, bodies that are not what any route accepts.
    add("malformed JSON", path, '{"a":');
    add("JSON null", path, "null");
    add("a JSON array", path, "[1,2]");
    add("a JSON string", path, '"text"');
    add("a lone number", path, "5");
    add("nested 5,000 deep", path, `{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`);
    add("nested 65 deep", path, `${"[".repeat(65)}${"]".repeat(65)}`);
    add("text/plain", path, baseText ?? "hello", "text/plain");
    add("a form", path, "a=1&b=2", "application/x-www-form-urlencoded");
    add("no content type", path, baseText ?? "{}", "");
    add("an unpaired surrogate escape", path, '{"name":"\\ud800"}');
    add("an unknown query parameter", `${path}?zz_unknown=1`, baseText);
    const headerProbes: [string, Record<string, string>][] = [
      ["a garbage bearer token", { authorization: "Bearer not.a.token" }],
      ["Basic authentication", { authorization: "Basic YWRtaW46YWRtaW4=" }],
      ["an empty bearer", { authorization: "Bearer " }],
      ["a 20 KB bearer token", { authorization: `Bearer ${"a".repeat(20_000)}` }],
      ["a garbage API key", { "x-api-key": "bwk_not-a-key" }],
      ["a device-token prefix that is no token", { authorization: "Bearer bwd_not-a-token" }],
      ["an odd request id", { "x-request-id": "<script>alert(1)</script>" }],
      ["an HTML accept header", { accept: "text/html" }],
    ];
    for (const [what, headers] of headerProbes) add(what, path, baseText, "application/json", headers);
    for (const parameter of operation.parameters) {
      const schema = resolve(parameter.schema);
      const values: [string, string][] = [
        ["empty", ""],
        ["text", "abc"],
        ["a fraction", "1.5"],
        ["hex", "0x10"],
        ["exponent", "1e3"],
        ["20 digits", "99999999999999999999"],
        ["negative", "-1"],
        ["zero", "0"],
        ["10 KB", "x".repeat(10_000)],
        ["percent-encoded NUL", "%00"],
        ["not a uuid", "not-a-uuid"],
        ["a boolean", "true"],
        ["padded", "  5  "],
        ["digits then text", "5abc"],
        ["non-ASCII", "é✓"],
      ];
      if (typeof schema.maximum === "number") values.push(["over maximum", String(schema.maximum + 1)]);
      if (typeof schema.minimum === "number") values.push(["under minimum", String(schema.minimum - 1)]);
      if (parameter.in === "query") {
        for (const [what, value] of values) {
          const separator = path.includes("?") ? "&" : "?";
          add(
            `query ${parameter.name}: ${what}`,
            `${path}${separator}${parameter.name}=${encodeURIComponent(value)}`,
            baseText,
          );
        }
        add(`query ${parameter.name} twice`, `${path}?${parameter.name}=1&${parameter.name}=abc`, baseText);
      } else if (parameter.in === "path") {
        for (const [what, value] of values)
          add(
            `path ${parameter.name}: ${what}`,
            pathFor(operation, useRealIds, [parameter.name, value]),
            baseText,
          );
        if (useRealIds) {
          const upper = path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, (id) => id.toUpperCase());
          add(`path ${parameter.name}: upper-case id`, upper, baseText);
        }
      }
    }
  }
  return probes;
}

test("no request derived from the OpenAPI document reaches a 5xx; every refusal is the error body", async () => {
  const all = operations().flatMap(probesFor);
  const failures: string[] = [];
  let sent = 0;
  const send = async (probe: Probe) => {
    const headers: Record<string, string> = {};
    if (probe.contentType) headers["content-type"] = probe.contentType;
    if (probe.credential !== "none") headers.authorization = `Bearer ${credentials[probe.credential]}`;
    Object.assign(headers, probe.headers);
    const hasBody = probe.body !== undefined && probe.method !== "GET";
    const response = await fetch(`${server.url}${probe.path}`, {
      method: probe.method,
      headers,
      body: hasBody ? probe.body : undefined,
    });
    sent++;
    // A success's body is not read (the agent download is the whole executable); a refusal's is.
    if (response.status < 400) {
      await response.body?.cancel();
      return;
    }
    const text = await response.text();
    const where = `${probe.method} ${probe.path.slice(0, 120)} (${probe.what})`;
    if (response.status >= 500) failures.push(`${where} -> ${response.status} ${text.slice(0, 200)}`);
    else if (response.status >= 400) {
      let body: { code?: unknown; message?: unknown } = {};
      try {
        body = JSON.parse(text);
      } catch {
        failures.push(`${where} -> ${response.status} not JSON: ${text.slice(0, 100)}`);
        return;
      }
      if (body.code !== response.status || typeof body.message !== "string")
        failures.push(`${where} -> ${response.status} without the error body: ${text.slice(0, 200)}`);
      else if (!documentedReasons().has(String((body as { reason?: unknown }).reason)))
        failures.push(
          `${where} -> reason ${JSON.stringify((body as { reason?: unknown }).reason)} is not in the document`,
        );
    }
  };
  // A few requests in flight at a time, like a busy client.
  const queue = [...all];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let probe = queue.shift(); probe; probe = queue.shift()) await send(probe);
    }),
  );
  const count = operations().length;
  console.log(`probe: ${sent} requests over ${count} operations, ${failures.length} failures`);
  expect(failures.slice(0, 30)).toEqual([]);
  expect(sent).toBeGreaterThanOrEqual(5000);
  // The probe's own session and device survived it, so its requests reached past authentication.
  const me = await fetch(`${server.url}/api/v1/users/me`, {
    headers: { authorization: `Bearer ${credentials.admin}` },
  });
  expect(me.status).toBe(200);
  expect(server.output()).not.toMatch(/unhandled error|did not match its schema/);
}, 300_000);
