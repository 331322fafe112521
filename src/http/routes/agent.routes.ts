import { type Static, Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { DevicePrincipal } from "../../domain/devices/authenticate-device";
import { completeWipe } from "../../domain/devices/complete-wipe";
import { normalizeEnforcement, splitReportedFacts } from "../../domain/devices/device-report";
import { previewCheckIn } from "../../domain/devices/preview-check-in";
import { rotateDeviceToken } from "../../domain/devices/rotate-device-token";
import { unenrollDevice } from "../../domain/devices/unenroll-device";
import { ValidationError } from "../../domain/errors";
import { deviceCaCertificatePem } from "../../domain/pki/device-ca";
import { renewDeviceCertificate } from "../../domain/pki/renew-device-certificate";
import { agentExecutable, checksumLine, downloadHeaders, serverCaCertificate } from "../agent-download";
import type { AppDeps } from "../app-deps";
import { jsonAnswer } from "../json-answer";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses, Uuid } from "../schemas/common";
import {
  AgentDownloadQuery,
  CheckInBody,
  CheckInPreviewSchema,
  CheckInResponse,
  CompleteWipeBody,
  RotatedDeviceTokenSchema,
  WipeIdParams,
} from "./agent.schemas";
import { WipeSchema } from "./devices.schemas";
import { RenewCertificateBody, RenewedCertificateSchema } from "./vpn.schemas";

/**
 * Elysia turns a JSON body that is not an object (`[]`, `5`) into `{}` when every field is optional, so
 * the check-in looks at the parsed body first. Unauthenticated requests are left to the 401.
 */
function refuseNonObjectBody({ body, request }: { body: unknown; request: Request }): void {
  const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
  if (!isObject && requestState(request).device !== null) {
    throw new ValidationError("invalid request body", [
      { field: "body", message: "must be a JSON object", received: body },
    ]);
  }
}

/**
 * The organization whose device CA ca.pem serves: the caller's (a device, user or API key credential),
 * else the `organization_id` asked for; 400 naming it when there is neither.
 */
function caOrganizationId(request: Request, organizationId: string | undefined): string {
  const state = requestState(request);
  const callerOrganization = state.device?.organizationId ?? state.principal?.organizationId;
  if (callerOrganization) return callerOrganization;
  if (state.authError) throw state.authError;
  if (organizationId) return organizationId.toLowerCase();
  throw new ValidationError("invalid query", [
    {
      field: "organization_id",
      message: "is required without a credential (or send the device token or certificate)",
    },
  ]);
}

/**
 * A device's check-in of `body`, answered once committed; the route and the fast lane (fast-lane.ts)
 * both answer through it. `headers` are the request's gathered headers, for an answer made outside
 * Elysia. Not checked against CheckInResponse on every answer: see jsonAnswer.
 */
export async function answerCheckIn(
  deps: AppDeps,
  device: DevicePrincipal,
  body: Static<typeof CheckInBody>,
  headers?: Record<string, string>,
): Promise<Response> {
  const facts = body.facts && splitReportedFacts(body.facts);
  const result = await deps.checkIns.checkIn(device, {
    agentVersion: body.agent_version,
    osVersion: body.os_version,
    policyId: body.policy_id,
    policyVersion: body.policy_version,
    facts: facts?.known,
    ignoredFacts: facts?.ignored,
    enforcement: body.enforcement && normalizeEnforcement(body.enforcement),
  });
  deps.metrics.countCheckIn(result.compliance.status);
  return jsonAnswer(result, headers);
}

/** /api/v1/agent: the endpoints device agents call with their device token or device certificate. */
export function agentRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/agent", tags: ["Agent"] })
    .use(security)
    .get(
      "/ca.pem",
      async ({ query, request }) =>
        new Response(await deviceCaCertificatePem(deps, caOrganizationId(request, query.organization_id)), {
          headers: { "content-type": "application/x-pem-file" },
        }),
      {
        query: Type.Object({ organization_id: Type.Optional(Uuid) }),
        response: {
          200: Type.String({ description: "The device CA's certificate (PEM)" }),
          ...errorResponses(400, 401, 404, 429),
        },
        detail: {
          summary: "The organization's device CA certificate",
          description:
            "The CA (ECDSA P-256) that signs the organization's device certificates: give it to " +
            "`openssl verify -CAfile`, or to a reverse proxy that checks client certificates. The " +
            "organization is the caller's when a device token, device certificate, session or API key " +
            "comes along; without one, ?organization_id= names it (a CA certificate is public). " +
            "Created on first use.",
          security: [],
        },
      },
    )
    .get(
      "/download",
      async ({ query }) => {
        const executable = await agentExecutable({ os: query.os ?? "linux", arch: query.arch });
        return new Response(Bun.file(executable.path), { headers: downloadHeaders(executable) });
      },
      {
        query: AgentDownloadQuery,
        response: {
          200: Type.String({
            format: "binary",
            description:
              "The bulwark executable: for Linux (`bulwark`), Windows (`bulwark.exe`) or macOS (`bulwark`)",
          }),
          ...errorResponses(400, 404, 429),
        },
        detail: {
          summary: "Download the agent (this server's executable, or its Windows or macOS build)",
          description:
            "The server and the device agent are one executable (`bulwark agent ...`): this serves the " +
            "running one, so a machine that can reach the server needs nothing else to enroll: " +
            "`curl -fsSLo bulwark <server>/api/v1/agent/download && chmod +x bulwark`. With " +
            "?os=windows (&arch=x64, the default and the only one) it serves the Windows build " +
            "found beside the running executable, bulwark-windows-x64.exe (`npm run build` makes it in " +
            "dist/ beside dist/bulwark), saved as bulwark.exe; from an elevated PowerShell: " +
            '`Invoke-WebRequest -UseBasicParsing -OutFile bulwark.exe "<server>/api/v1/agent/download?os=windows&arch=x64"`. ' +
            "With ?os=macos&arch=arm64 (Apple silicon) or &arch=x64 (Intel; `uname -m` says x86_64) it serves " +
            "bulwark-darwin-arm64 or bulwark-darwin-x64 from beside it, ad-hoc signed, saved as bulwark: " +
            '`curl -fsSLo bulwark "<server>/api/v1/agent/download?os=macos&arch=arm64"`. ' +
            "Public, like the executable itself. Headers: X-Bulwark-Version (the server's), " +
            "X-Bulwark-SHA256 (hex; also at /agent/download.sha256 with the same query). 400 for another " +
            "os or arch, for os=macos without arch and for a pair with no build (linux or windows on arm64). " +
            "404 agent_download_unavailable when the server runs from source (npm start) " +
            "rather than as the built executable, or, for Windows and macOS, when their file is not " +
            "beside it (the details say which file and which folder).",
          security: [],
        },
      },
    )
    .get(
      "/download.sha256",
      async ({ query }) =>
        new Response(checksumLine(await agentExecutable({ os: query.os ?? "linux", arch: query.arch })), {
          headers: { "content-type": "text/plain; charset=utf-8" },
        }),
      {
        query: AgentDownloadQuery,
        response: {
          200: Type.String({
            description:
              "`<sha256 hex>  bulwark` (`bulwark.exe` with ?os=windows), as sha256sum and `shasum -a 256` print it",
          }),
          ...errorResponses(400, 404, 429),
        },
        detail: {
          summary: "The agent download's SHA-256",
          description:
            "One line for `sha256sum -c` beside the downloaded file: " +
            "`curl -fsS <server>/api/v1/agent/download.sha256 | sha256sum -c`. For Windows, " +
            "?os=windows&arch=x64 gives the line of bulwark.exe; compare its first word with " +
            "`(Get-FileHash bulwark.exe -Algorithm SHA256).Hash` in PowerShell (which prints it in capitals). " +
            "For macOS, ?os=macos&arch=arm64 or x64 gives the line of bulwark, for `shasum -a 256 -c`. " +
            "400 and 404 as for the download.",
          security: [],
        },
      },
    )
    .get(
      "/server-ca",
      () => {
        const { pem, sha256 } = serverCaCertificate(deps.config.server.tls_cert);
        return new Response(pem, {
          headers: { "content-type": "application/x-pem-file", "x-bulwark-sha256": sha256 },
        });
      },
      {
        response: {
          200: Type.String({ description: "One PEM certificate" }),
          ...errorResponses(400, 404, 429),
        },
        detail: {
          summary: "The CA that Bulwark's TLS certificate chains to",
          description:
            "The last certificate of server.tls_cert (the root of the chain, or the certificate itself when " +
            "self-signed), with its SHA-256 (of the DER, hex) in X-Bulwark-SHA256. An agent enrolls with " +
            "`--ca-sha256 <hex>`: it fetches this without trusting the connection, keeps it only when its " +
            "SHA-256 is the one given (from the administrator's console), and trusts it from then on. " +
            "404 server_ca_unavailable when Bulwark does not terminate TLS itself.",
          security: [],
        },
      },
    )
    .post(
      "/certificate",
      ({ body, device, actor }) => renewDeviceCertificate(deps, device, actor, body.csr),
      {
        device: true,
        body: RenewCertificateBody,
        response: { 200: RenewedCertificateSchema, ...errorResponses(400, 401, 409, 429) },
        detail: {
          summary: "Renew the device certificate",
          description:
            "Authorization: Bearer <device_token>, or the current device certificate. Signs a new " +
            "certificate (one year, CN = device id) for the key in the CSR and revokes every earlier " +
            "one in the same transaction: use the new one from now on. 400: a CSR that is not PKCS#10 " +
            "PEM, not ECDSA P-256 or RSA 2048+, or whose signature does not verify. 409 " +
            "device_suspended: a suspended device gets no certificate (suspension revoked its own); " +
            "renew with the device token once unsuspended. Renew a month before certificate_expires_at.",
        },
      },
    )
    .post("/checkin", ({ body, device }) => answerCheckIn(deps, device, body), {
      device: true,
      transform: refuseNonObjectBody,
      body: CheckInBody,
      response: { 200: CheckInResponse, ...errorResponses(400, 401, 429, 503) },
      detail: {
        summary: "Check in",
        description:
          "Authorization: Bearer <device_token>, or the device certificate (in Bulwark's TLS " +
          "handshake, or a trusted proxy's Client-Cert header). Updates last_seen (an offline device " +
          "comes back online; a suspended one stays suspended), stores the reported versions and " +
          "facts, re-evaluates compliance, logs device.checkin when the report changed or once per " +
          "devices.checkin_log_interval_seconds (default an hour) otherwise, and logs policy.applied " +
          "once per policy version the agent reports. The answer comes once the check-in is " +
          "committed (check-ins arriving together share one transaction); 503 database_unavailable " +
          "when it could not be saved: check in again. Returns the current policy, pending wipe commands and " +
          "the VPN peer settings (vpn_config: rewrite the tunnel when they changed).",
      },
    })
    .get("/checkin", ({ device }) => previewCheckIn(deps, device), {
      device: true,
      response: { 200: CheckInPreviewSchema, ...errorResponses(400, 401, 429, 503) },
      detail: {
        summary: "Preview a check-in",
        description:
          "Authorization: Bearer <device_token>, or the device certificate. What POST /agent/checkin " +
          "would answer about the device's current policy, pending wipe commands and VPN settings, " +
          "recording nothing: last_seen, facts, compliance and the device's log stay as they are. For " +
          "an agent's dry run (bulwark agent run --dry-run).",
      },
    })
    .post("/token", ({ device, actor }) => rotateDeviceToken(deps, actor, device), {
      device: true,
      response: { 200: RotatedDeviceTokenSchema, ...errorResponses(400, 401, 429) },
      detail: {
        summary: "Rotate the device token",
        description:
          "Authorization: Bearer <device_token>, or the device certificate. Issues a new device token " +
          "(valid a year, shown once: store it before using it) and ends the device's earlier tokens " +
          "five minutes later (previous_tokens_expire_at; 401 device_token_expired after that), so an " +
          "answer lost on the network does not strand the agent: it may retry with the token it has. " +
          "Audited as device.token_rotate.",
      },
    })
    .delete(
      "/device",
      async ({ device, actor, set }) => {
        await unenrollDevice(deps, actor, device);
        set.status = 204;
      },
      {
        device: true,
        response: { 204: Type.Void({ description: "Unenrolled" }), ...errorResponses(400, 401, 409, 429) },
        detail: {
          summary: "Unenroll: the device leaves the server",
          description:
            "Authorization: Bearer <device_token>, or the device certificate. Removes the device as a " +
            "retirement does: its token and certificate stop working at once, its VPN peer and address " +
            "go, its hardware_id may enroll again; its record, logs and wipes go with it. Audited as " +
            "device.unenroll (the device as actor), event device.unenrolled. 409 wipe_pending while a " +
            "wipe waits for the device (carry it out first); 409 device_suspended for a suspended " +
            "device (an administrator may retire it).",
        },
      },
    )
    .post(
      "/wipes/:wipe_id/complete",
      ({ params, body, device, actor }) =>
        completeWipe(deps, device, actor, params.wipe_id, {
          success: body.success,
          error: body.error,
          ...(body.report ? { report: body.report } : {}),
        }),
      {
        device: true,
        params: WipeIdParams,
        body: CompleteWipeBody,
        response: { 200: WipeSchema, ...errorResponses(400, 401, 404, 409, 429) },
        detail: {
          summary: "Report the outcome of a wipe command",
          description:
            "success: the wipe is completed, the device wiped, its device token and certificates revoked. Failure: " +
            "the wipe is failed and the device keeps its status. 409 unless the wipe is pending. `report` " +
            "says what the device erased, path by path, and whom it notified; it is shown as it was sent " +
            "on GET /devices/:id/wipe/:wipe_id.",
        },
      },
    );
}
