/**
 * A SAML sign-in started before the process is killed finishes after the restart: the pending
 * AuthnRequest is a database row, not memory. Against the built executable, with a samlify IdP.
 */
import { expect, test } from "bun:test";
import { callServer as call, serversOnOneFolder } from "../helpers/binary";
import { createSamlIdp } from "../helpers/saml-idp";

const ADMIN = { email: "saml-restart@example.com", password: "restart-password-1" };
// A fixed public URL: the ACS and entity ID are named after it, whatever port each run listens on.
const BASE_URL = "https://bulwark.corp.test";
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_ADMIN_ORG: "Restart Corp",
  BULWARK_SERVER_BASE_URL: BASE_URL,
};
const CALLBACK = "https://console.corp.test/sso/saml";

const servers = serversOnOneFolder("bulwark-sso-restart-", ENV);
const idp = createSamlIdp({
  entityId: "https://idp.corp.test/metadata",
  ssoUrl: "https://idp.corp.test/sso",
});

test("a SAML response answering a request made before a SIGKILL is accepted after the restart, once", async () => {
  const first = await servers.start();
  const { token, user } = await call<{ token: string; user: { organization_id: string } }>(
    first,
    "POST",
    "/api/v1/auth/login",
    undefined,
    ADMIN,
  );
  const setPlan = Bun.spawnSync(
    [servers.binary(), "org", "set-plan", "--org", "Restart Corp", "--plan", "enterprise"],
    {
      cwd: servers.folder,
      env: { PATH: process.env.PATH ?? "", ...ENV },
    },
  );
  expect(setPlan.exitCode).toBe(0);
  await call(first, "PATCH", "/api/v1/organizations/current", token, {
    sso: {
      saml: {
        enabled: true,
        idp_entity_id: "https://idp.corp.test/metadata",
        idp_sso_url: "https://idp.corp.test/sso",
        idp_certificate: idp.certificate,
        redirect_uris: [CALLBACK],
        allowed_domains: ["corp.test"],
      },
    },
  });
  const metadata = await (
    await fetch(`${first.url}/api/v1/auth/sso/saml/metadata?organization_id=${user.organization_id}`)
  ).text();
  const state = crypto.randomUUID().replaceAll("-", "");
  const login = await fetch(
    `${first.url}/api/v1/auth/sso/saml/login?${new URLSearchParams({ organization_id: user.organization_id, redirect_uri: CALLBACK, state })}`,
    { redirect: "manual" },
  );
  expect(login.status).toBe(302);
  const samlResponse = await idp.respond(metadata, login.headers.get("location") ?? "", {
    nameId: "restart-subject",
    email: "restart.user@corp.test",
  });
  await first.stop("SIGKILL");

  const second = await servers.start();
  const post = () =>
    fetch(`${second.url}/api/v1/auth/sso/saml/acs`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: state }).toString(),
    });
  const accepted = await post();
  expect(accepted.status).toBe(303);
  const location = new URL(accepted.headers.get("location") ?? "");
  expect(location.searchParams.get("state")).toBe(state);
  const code = location.searchParams.get("code") ?? "";
  const signedIn = await call<{ user: { email: string } }>(
    second,
    "POST",
    "/api/v1/auth/sso/saml/token",
    undefined,
    {
      code,
    },
  );
  expect(signedIn.user.email).toBe("restart.user@corp.test");
  const replayed = new URL((await post()).headers.get("location") ?? "");
  expect(replayed.searchParams.get("error")).toBe("sso_response_replayed");
}, 30_000);
