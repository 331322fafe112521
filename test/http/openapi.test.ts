import { afterAll, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { documentedLocationParameters } from "../helpers/documented-redirects";
import { createTestApp, inProcessTest } from "../helpers/test-app";

// Every operation is asked once without a credential: more than the default 100 a minute from one address.
const t = await createTestApp({ rate_limit: { unauthenticated_per_minute: 1000 } });
afterAll(() => t.close());

const document = (await t.request("GET", "/api/v1/openapi.json")).body;

test("the document is valid OpenAPI 3.1", async () => {
  expect(document.openapi).toStartWith("3.1");
  await SwaggerParser.validate(structuredClone(document));
});

test("Redocly's recommended rules find no error and no warning", async () => {
  const config = await createConfig({ extends: ["recommended"] });
  // An absolute reference: Redocly skips problems it locates in a relative one.
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: "/openapi.json",
    config,
  });
  expect(
    problems.map(
      (problem) =>
        `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
    ),
  ).toEqual([]);
});

test("the document describes the API, not the console's pages and redirects", () => {
  const outsideTheApi = Object.keys(document.paths).filter((path) => !path.startsWith("/api/v1/"));
  expect(outsideTheApi.sort()).toEqual(["/.well-known/jwks.json", "/metrics"]);
});

test("a redirect says where its Location points and which parameters it carries, and answers no 2XX", () => {
  type Responses = Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  const redirects: string[] = [];
  for (const [path, item] of Object.entries(
    document.paths as Record<string, Record<string, { responses: Responses }>>,
  )) {
    for (const [method, operation] of Object.entries(item)) {
      const statuses = Object.keys(operation.responses);
      // 304 Not Modified answers a conditional GET (GET /vpn/peers); it is no redirect.
      for (const status of statuses.filter((code) => code.startsWith("3") && code !== "304")) {
        redirects.push(`${method} ${path} ${status}`);
        expect({
          path,
          status,
          parameters: documentedLocationParameters(document, method, path, Number(status)).length > 0,
          successes: statuses.filter((code) => code.startsWith("2")),
          otherwise: resolve(operation.responses.default?.content?.["application/json"]?.schema)?.required,
        }).toEqual({
          path,
          status,
          parameters: true,
          successes: [],
          otherwise: expect.arrayContaining(["code", "reason", "message"]),
        });
      }
    }
  }
  expect(redirects).toEqual([
    "get /api/v1/auth/sso/oidc/authorize 302",
    "get /api/v1/auth/sso/saml/login 302",
    "post /api/v1/auth/sso/saml/acs 303",
  ]);
});

test("the main resources and the error body are named components, referenced where they are used", () => {
  const names = Object.keys(document.components.schemas);
  for (const name of ["Device", "DeviceListItem", "Policy", "PolicyData", "User", "Webhook", "Error"])
    expect(names).toContain(name);
  const device = document.paths["/api/v1/devices/{id}"].get.responses;
  expect(device["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Device" });
  expect(device["404"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
  expect(Object.keys(device["200"].headers)).toEqual([
    "X-Request-Id",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
  ]);
  expect(device["429"].headers["Retry-After"]).toEqual({ $ref: "#/components/headers/Retry-After" });
  expect(document.info.license.name).toBeString();
});

test("every documented operation is served: a request reaches a handler, not the router's 404 or 405", async () => {
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) {
      const concrete = path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      const response = await t.fetch(concrete, {
        method: method.toUpperCase(),
        headers: { accept: "application/json" },
      });
      // A refusal's body names its reason; a success's is not read (the agent download is the executable).
      const reason =
        response.status >= 400 ? ((await response.json()) as { reason?: string }).reason : undefined;
      if (response.status < 400) await response.body?.cancel();
      expect({ method, path, reason }).not.toMatchObject({
        reason: expect.stringMatching(/^(route_not_found|method_not_allowed)$/),
      });
    }
  }
}, 30_000); // a request per operation: seconds on a busy machine

inProcessTest("every route in the router's table is documented", () => {
  const served = t.app.routes
    .filter((route) => !(route.hooks as { detail?: { hide?: boolean } })?.detail?.hide)
    .map(
      (route) =>
        `${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}").replace(/(.)\/$/, "$1")}`,
    )
    .sort();
  const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    .sort();
  expect(documented).toEqual([...new Set(served)]);
});

/** A schema, or the component it references. */
function resolve(schema: { $ref?: string } | undefined): { required?: string[] } | undefined {
  if (!schema?.$ref) return schema as { required?: string[] } | undefined;
  return document.components.schemas[schema.$ref.split("/").at(-1) as string];
}

test("every operation documents a success response and its error responses with the error body", () => {
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const statuses = Object.keys(operation.responses ?? {});
      const succeeds = statuses.some(
        (status) => status.startsWith("2") || status === "302" || status === "303",
      );
      expect({ path, method, hasSuccess: succeeds }).toEqual({
        path,
        method,
        hasSuccess: true,
      });
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      if (!isPublic && !path.startsWith("/api/v1/agent") && path !== "/api/v1/devices/enroll") {
        expect({ path, method, has401: statuses.includes("401") }).toEqual({ path, method, has401: true });
      }
      // The health check answers 503 with its own body, so monitors can read which part is down.
      const errorStatuses = statuses.filter(
        (code) => Number(code) >= 400 && !(path === "/api/v1/health" && code === "503"),
      );
      for (const status of errorStatuses) {
        const schema = resolve(operation.responses[status].content?.["application/json"]?.schema);
        expect({ path, method, status, required: schema?.required?.slice(0, 3) }).toEqual({
          path,
          method,
          status,
          required: ["code", "reason", "message"],
        });
      }
      // JSON everywhere but the SAML ACS, which the IdP's page posts as a browser form.
      if (operation.requestBody)
        expect(Object.keys(operation.requestBody.content)).toEqual([
          path === "/api/v1/auth/sso/saml/acs" ? "application/x-www-form-urlencoded" : "application/json",
        ]);
    }
  }
});

inProcessTest("the docs page and its script are served locally, with no third-party URL", async () => {
  const page = await t.request("GET", "/api/v1/docs");
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const scripts = [...String(page.body).matchAll(/src="([^"]+)"/g)].map((match) => match[1]);
  expect(scripts.length).toBeGreaterThan(0);
  for (const src of scripts) {
    expect(src).toStartWith("/");
    const script = await t.app.handle(new Request(`http://localhost${src}`));
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  }
  expect(String(page.body)).toContain('data-url="/api/v1/openapi.json"');
});

test("pagination parameters are documented as integers with their bounds", () => {
  const parameters = document.paths["/api/v1/devices"].get.parameters as {
    name: string;
    schema: Record<string, unknown>;
  }[];
  const pageSize = parameters.find((parameter) => parameter.name === "page_size");
  expect(pageSize?.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 20 });
});
