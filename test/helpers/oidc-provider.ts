import { expect } from "bun:test";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { confirmSsoDomainsOf, type TestApp } from "./test-app";

/** An account at the test provider: what its claims say about the person. */
export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/**
 * A real OpenID Provider (panva's certified oidc-provider) on a loopback port, with one confidential
 * client for Bulwark. Its development login and consent forms are filled in by `signIn`, as a person would
 * in a browser: any login name is accepted and becomes the account id (the `sub`). Its issuer names the
 * host it listens on: 127.0.0.1, or `host` (a name such as localhost).
 */
export async function startOidcProvider(options: { redirectUris: string[]; host?: string }) {
  const accounts = new Map<string, ProviderAccount>();
  let handler: (request: IncomingMessage, response: ServerResponse) => void = () => {};
  // When set, the provider publishes these keys instead of those it signs with (publishForeignKeys).
  let foreignJwks: string | null = null;
  const server = createServer((request, response) => {
    if (foreignJwks !== null && request.url?.startsWith("/jwks")) {
      response.setHeader("content-type", "application/json");
      response.end(foreignJwks);
      return;
    }
    handler(request, response);
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const client = {
    client_id: `bulwark-${crypto.randomUUID()}`,
    client_secret: crypto.randomUUID() + crypto.randomUUID(),
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        ...client,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    cookies: { keys: [crypto.randomUUID()] },
    findAccount: async (_context, id) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
  });
  // The provider's own "this is a development setup" warnings say nothing about the test.
  provider.on("server_error", (_context, error) => console.error("oidc-provider:", error));
  handler = provider.callback();

  /**
   * Follows an authorization URL (Bulwark's 302) through the provider's login and consent forms as
   * `login`, and returns the redirect back to the client: its code, state and iss.
   */
  async function signIn(authorizationUrl: string, login: string) {
    const cookies = new Map<string, string>();
    const send = async (url: string, init: RequestInit = {}) => {
      const response = await fetch(new URL(url, issuer), {
        ...init,
        redirect: "manual",
        headers: {
          ...(init.headers as Record<string, string>),
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const index = (pair ?? "").indexOf("=");
        if (index > 0) cookies.set(pair!.slice(0, index), pair!.slice(index + 1));
      }
      return response;
    };
    let response = await send(authorizationUrl);
    for (let step = 0; step < 10; step++) {
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, issuer);
        if (next.origin !== new URL(issuer).origin) return next;
        response = await send(next.toString());
        continue;
      }
      const page = await response.text();
      if (response.status !== 200)
        throw new Error(`the provider answered ${response.status}: ${page.slice(0, 500)}`);
      // Fill in and submit the form on the page: the login form, then the consent form.
      const action = page.match(/<form[^>]*action="([^"]+)"/)?.[1];
      const prompt = page.match(/name="prompt" value="([^"]+)"/)?.[1];
      if (!action || !prompt) throw new Error(`no form on the provider's page: ${page.slice(0, 500)}`);
      const fields = new URLSearchParams({ prompt });
      if (prompt === "login") {
        fields.set("login", login);
        fields.set("password", "any password");
      }
      response = await send(action.replaceAll("&amp;", "&"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: fields.toString(),
      });
    }
    throw new Error("the provider never sent the browser back to the client");
  }

  return {
    issuer,
    ...client,
    /** Adds or changes a person at the provider (their login is their `sub`). */
    setAccount: (login: string, account: ProviderAccount) => accounts.set(login, account),
    signIn,
    /**
     * From now on the provider's published keys (its jwks_uri) are another key's, with the same key ids:
     * the ID tokens it signs no longer verify against what it publishes.
     */
    publishForeignKeys: async () => {
      const published = (await (await fetch(`${issuer}/jwks`)).json()) as {
        keys: { kid?: string; alg?: string }[];
      };
      const keys = await Promise.all(
        published.keys.map(async (key) => {
          const { publicKey } = await generateKeyPair(key.alg ?? "RS256", { extractable: true });
          return { ...(await exportJWK(publicKey)), kid: key.kid, alg: key.alg, use: "sig" };
        }),
      );
      foreignJwks = JSON.stringify({ keys });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type TestOidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;

/** The client redirect URI the tests register with the provider and with Bulwark's connection. */
export const OIDC_CALLBACK = "https://console.corp.test/sso/callback";

/** A new organization whose OIDC connection points at `op` (emails of corp.test allowed). */
export async function organizationWithOidc(
  t: TestApp,
  op: TestOidcProvider,
  oidc: Record<string, unknown> = {},
) {
  const org = await t.createOrganization();
  const response = await t.request("PATCH", "/api/v1/organizations/current", {
    token: org.adminToken,
    body: {
      sso: {
        oidc: {
          enabled: true,
          issuer: op.issuer,
          client_id: op.client_id,
          client_secret: op.client_secret,
          redirect_uris: [OIDC_CALLBACK],
          allowed_domains: ["corp.test"],
          ...oidc,
        },
      },
    },
  });
  expect(response.status).toBe(200);
  await confirmSsoDomainsOf(t, org);
  return org;
}

/** GET Bulwark's /authorize without following the redirect; the Location is the provider's authorization URL. */
export async function authorizeOidc(t: TestApp, query: Record<string, string>) {
  const response = await t.fetch(`/api/v1/auth/sso/oidc/authorize?${new URLSearchParams(query)}`, {
    redirect: "manual",
  });
  return { status: response.status, location: response.headers.get("location"), text: await response.text() };
}

/**
 * The whole browser round trip: Bulwark's authorize redirect, the provider's forms as `login`, and the
 * redirect back to the client; `alter` may change the authorization URL on its way to the provider.
 * Returns what the client passes to POST /auth/sso/oidc/callback.
 */
export async function throughOidcProvider(
  t: TestApp,
  op: TestOidcProvider,
  login: string,
  alter?: (url: URL) => void,
) {
  const state = crypto.randomUUID().replaceAll("-", "");
  const started = await authorizeOidc(t, {
    client_id: op.client_id,
    redirect_uri: OIDC_CALLBACK,
    scope: "openid profile email",
    state,
  });
  expect(started.status).toBe(302);
  const url = new URL(started.location ?? "");
  alter?.(url);
  const back = await op.signIn(url.toString(), login);
  expect(`${back.origin}${back.pathname}`).toBe(OIDC_CALLBACK);
  expect(back.searchParams.get("state")).toBe(state);
  return {
    state,
    code: back.searchParams.get("code") ?? "",
    iss: back.searchParams.get("iss") ?? undefined,
  };
}
