import { type AnyElysia, Elysia } from "elysia";
import type { AppDeps } from "./http/app-deps";
import { apiDocsPlugin } from "./http/plugins/api-docs";
import { errorHandlerPlugin, routeTableOf } from "./http/plugins/error-handler";
import { jsonBodyPlugin } from "./http/plugins/json-body";
import { normalizeInputPlugin } from "./http/plugins/normalize-input";
import { securityPlugin } from "./http/plugins/security";
import { agentRoutes } from "./http/routes/agent.routes";
import { auditLogRoutes } from "./http/routes/audit-logs.routes";
import { authRoutes } from "./http/routes/auth.routes";
import { consoleRoutes } from "./http/routes/console.routes";
import { deviceRoutes } from "./http/routes/devices.routes";
import { enrollmentTokenRoutes } from "./http/routes/enrollment-tokens.routes";
import { gdprRoutes } from "./http/routes/gdpr.routes";
import { mfaRoutes } from "./http/routes/mfa.routes";
import { organizationRoutes } from "./http/routes/organizations.routes";
import { phoneProfileRoutes } from "./http/routes/phone-profiles.routes";
import { policyRoutes } from "./http/routes/policies.routes";
import { ssoRoutes } from "./http/routes/sso.routes";
import { systemRoutes } from "./http/routes/system.routes";
import { userRoutes } from "./http/routes/users.routes";
import { vpnRoutes } from "./http/routes/vpn.routes";
import { webhookRoutes } from "./http/routes/webhooks.routes";

/** The Elysia application: error mapping, security, OpenAPI and every router. No side effects. */
export function buildApp(deps: AppDeps) {
  const security = securityPlugin(deps);
  const app: AnyElysia = new Elysia({ strictPath: true })
    .use(errorHandlerPlugin(deps, () => routeTableOf(app)))
    .use(security)
    .use(jsonBodyPlugin(() => app.routes))
    .use(normalizeInputPlugin())
    .use(apiDocsPlugin(() => app, deps.version))
    .use(systemRoutes(deps))
    .use(authRoutes(deps, security))
    .use(mfaRoutes(deps, security))
    .use(ssoRoutes(deps, security))
    .use(userRoutes(deps, security))
    .use(organizationRoutes(deps, security))
    .use(auditLogRoutes(deps, security))
    .use(gdprRoutes(deps, security))
    .use(policyRoutes(deps, security))
    .use(enrollmentTokenRoutes(deps, security))
    .use(deviceRoutes(deps, security))
    .use(phoneProfileRoutes(deps, security))
    .use(agentRoutes(deps, security))
    .use(vpnRoutes(deps, security))
    .use(webhookRoutes(deps, security))
    .use(consoleRoutes());
  return app;
}
