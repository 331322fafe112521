import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { publicJwks } from "../../domain/auth/token-keys";
import { checkDatabase } from "../../domain/system/check-database";
import type { AppDeps } from "../app-deps";
import { errorResponses } from "../schemas/common";
import { JwksSchema } from "./auth.schemas";

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
    version: Type.String(),
    database: Type.Union([Type.Literal("ok"), Type.Literal("unreachable")]),
    uptime_seconds: Type.Integer(),
  },
  { title: "Health" },
);

/** Health check and the JWKS document; no authentication. */
export function systemRoutes(deps: AppDeps) {
  return new Elysia({ tags: ["System"] })
    .get(
      "/api/v1/health",
      ({ set }) => {
        const isDatabaseOk = checkDatabase(deps);
        if (!isDatabaseOk) set.status = 503;
        return {
          status: isDatabaseOk ? ("ok" as const) : ("degraded" as const),
          version: deps.version,
          database: isDatabaseOk ? ("ok" as const) : ("unreachable" as const),
          uptime_seconds: Math.floor((deps.clock.now().getTime() - deps.startedAt.getTime()) / 1000),
        };
      },
      {
        response: { 200: HealthSchema, 503: HealthSchema, ...errorResponses(429) },
        detail: {
          summary: "Health check",
          description: "503 when the database cannot be reached.",
          security: [],
        },
      },
    )
    .get("/.well-known/jwks.json", () => publicJwks(deps.keys), {
      response: { 200: JwksSchema, ...errorResponses(429) },
      detail: { summary: "Public keys that verify Bulwark's access tokens (JWKS)", security: [] },
    });
}
