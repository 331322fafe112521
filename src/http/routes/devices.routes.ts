import { Elysia } from "elysia";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";

// PLACEHOLDER: routes land with their issue.
export function deviceRoutes(_deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ tags: ["Devices"] }).use(security);
}
