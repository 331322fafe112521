/**
 * Check-then-act races opened by awaited queries: a check read on the reader connection (`deps.db`)
 * before `withTransaction`, and not made again on `tx`, can be undone by another request that commits
 * in between. Each test starts two requests together and asserts an end state that no order of the two
 * requests one after the other can reach. A race shows only in some interleavings, so each test plays
 * several rounds, each on a fresh user.
 */
import { describe, expect, test } from "bun:test";
import { enableTotp } from "../helpers/mfa";
import { freshTestApps, TEST_PASSWORD, type TestApp } from "../helpers/test-app";
import { totpCode } from "../helpers/totp";

const ROUNDS = 30;
const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

/** Starts `send` after `ticks` microtasks: each round tries another interleaving. */
async function later<T>(ticks: number, send: () => Promise<T>): Promise<T> {
  for (let tick = 0; tick < ticks; tick++) await Promise.resolve();
  return await send();
}

async function mfaStatus(t: TestApp, token: string) {
  const status = await t.request("GET", "/api/v1/auth/mfa", { token });
  expect(status.status).toBe(200);
  return status.body as { enabled: boolean; recovery_codes_remaining: number };
}

describe("concurrent requests on one account's factors", () => {
  test("confirming an authenticator app while a new enrolment replaces it never answers 'enabled' for an account left without a factor", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = await t.createUser(org.adminToken, "operator");
      const first = await t.request("POST", "/api/v1/auth/mfa/totp", { token: user.token });
      expect(first.status).toBe(200);
      const [confirm, restart] = await Promise.all([
        t.request("POST", "/api/v1/auth/mfa/totp/confirm", {
          token: user.token,
          body: { code: totpCode(first.body.secret, t.now()) },
        }),
        later(round * 2, () => t.request("POST", "/api/v1/auth/mfa/totp", { token: user.token })),
      ]);
      const status = await mfaStatus(t, user.token);
      outcomes.push(`${confirm.status}/${restart.status} enabled=${status.enabled}`);
      // One after the other: confirm first makes the restart a 409 (an app is set up); restart first
      // makes the old code wrong (400). Never "enabled, here are your recovery codes" with MFA off.
      if (confirm.status === 200)
        expect({ round, outcomes, enabled: status.enabled }).toEqual({ round, outcomes, enabled: true });
    }
  });

  test("new recovery codes requested while the last factor is removed are not left on an account without MFA", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = await t.createUser(org.adminToken, "operator");
      const { methodId } = await enableTotp(t, user.token);
      const [regenerate, remove] = await Promise.all([
        t.request("POST", "/api/v1/auth/mfa/recovery-codes", {
          token: user.token,
          body: { password: TEST_PASSWORD },
        }),
        t.request("DELETE", `/api/v1/auth/mfa/${methodId}`, {
          token: user.token,
          body: { password: TEST_PASSWORD },
        }),
      ]);
      expect(remove.status).toBe(204);
      const status = await mfaStatus(t, user.token);
      outcomes.push(`${regenerate.status}/${remove.status} codes=${status.recovery_codes_remaining}`);
      // Regenerate first: removing the last factor deletes the codes. Remove first: regenerate is a 409.
      expect({ round, outcomes, enabled: status.enabled, codes: status.recovery_codes_remaining }).toEqual({
        round,
        outcomes,
        enabled: false,
        codes: 0,
      });
    }
  });
});
