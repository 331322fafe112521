/** What Elysia sends with an object it turns into JSON; the fast lane's answers carry the same. */
export const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/**
 * `value` as the JSON answer Elysia would send, but without Elysia's check of the answer against the
 * route's response schema (Elysia does not check a Response). For the check-in, whose every answer
 * carries the policy document: checking the document's unique-items arrays cost ~18% of a check-in,
 * and the document was checked when it was written. The schema still documents the answer, and
 * test/http/agent.test.ts checks answers against it. Elysia adds the request's gathered headers.
 */
export function jsonAnswer(value: unknown, headers: Record<string, string> = {}): Response {
  headers["content-type"] = JSON_CONTENT_TYPE;
  return new Response(JSON.stringify(value), { headers });
}
