import type { TestApp } from "./test-app";
import { totpCode } from "./totp";

/**
 * Sets up an authenticator app for the holder of `token` through the API, confirming it with the code of
 * the current step. Returns the secret, the method id and the recovery codes shown once.
 */
export async function enableTotp(t: TestApp, token: string) {
  const enrolment = await t.request("POST", "/api/v1/auth/mfa/totp", { token });
  if (enrolment.status !== 200)
    throw new Error(`TOTP enrolment failed: ${enrolment.status} ${JSON.stringify(enrolment.body)}`);
  const secret = enrolment.body.secret as string;
  const confirm = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", {
    token,
    body: { code: totpCode(secret, t.now()) },
  });
  if (confirm.status !== 200)
    throw new Error(`TOTP confirmation failed: ${confirm.status} ${JSON.stringify(confirm.body)}`);
  const status = await t.request("GET", "/api/v1/auth/mfa", { token });
  const method = (status.body.methods as { id: string; type: string }[]).find((row) => row.type === "totp");
  return {
    secret,
    methodId: method?.id as string,
    recoveryCodes: (confirm.body.recovery_codes ?? []) as string[],
  };
}

/**
 * A code the server has not seen yet: in-process the fake clock moves on one step; against the
 * executable (real time) the code of the next step, which the one step of drift allows.
 */
export function unusedCode(t: TestApp, secret: string): string {
  if (t.target === "in-process") {
    t.clock.advanceSeconds(30);
    return totpCode(secret, t.now());
  }
  return totpCode(secret, t.now(), 1);
}
