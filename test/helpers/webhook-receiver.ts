import { verify as verifyGithubSignature } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { createWebhookDispatcher } from "../../src/jobs/webhook-dispatcher";
import type { TestApp } from "./test-app";

/** One POST as the receiver got it: the raw body exactly as sent, and the headers. */
export interface ReceivedRequest {
  body: string;
  payload: { id: string; event: string; timestamp: string; data: Record<string, unknown> };
  headers: Record<string, string>;
}

export type Respond = (request: ReceivedRequest, index: number) => Response | Promise<Response>;

/** A real HTTP receiver on 127.0.0.1 that records every request and answers with `respond` (200 by default). */
export function startWebhookReceiver(respond: Respond = () => new Response("ok")) {
  const received: ReceivedRequest[] = [];
  let answer = respond;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const body = await request.text();
      const entry: ReceivedRequest = {
        body,
        payload: JSON.parse(body),
        headers: Object.fromEntries(request.headers.entries()),
      };
      received.push(entry);
      return answer(entry, received.length - 1);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/bulwark`,
    port: server.port,
    received,
    /** Changes how the following requests are answered. */
    respondWith(next: Respond) {
      answer = next;
    },
    stop: () => server.stop(true),
  };
}

export type WebhookReceiver = ReturnType<typeof startWebhookReceiver>;

/**
 * Verifies both signatures of a request with the independent libraries: @octokit/webhooks-methods for
 * X-Service-Signature, standardwebhooks for webhook-id / webhook-timestamp / webhook-signature.
 */
export async function verifyBothSignatures(request: ReceivedRequest, secret: string): Promise<boolean> {
  const signature = request.headers["x-service-signature"] ?? "";
  const isGithubValid = await verifyGithubSignature(secret, request.body, signature);
  // A string secret in raw format is read one byte per UTF-16 unit, so pass the UTF-8 bytes.
  const verifier = new Webhook(new TextEncoder().encode(secret), { format: "raw" });
  let isStandardValid = true;
  try {
    verifier.verify(request.body, request.headers);
  } catch {
    isStandardValid = false;
  }
  return isGithubValid && isStandardValid;
}

/**
 * Delivers what is due to `receiver`: in-process by running the dispatcher until nothing is left, against
 * the executable by waiting (up to 15 s) for its own dispatcher to have sent `expected` requests and
 * recorded their outcome (it logs each attempt once the receiver's answer is stored and counted, a
 * moment after the receiver has the request).
 */
export async function deliverWebhooks(t: TestApp, receiver: WebhookReceiver, expected: number) {
  if (t.target === "in-process") {
    const dispatcher = createWebhookDispatcher(t.deps);
    for (let round = 0; round < 10 && (await dispatcher.runOnce()) > 0; round++);
    return;
  }
  const deadline = Date.now() + 15_000;
  while (receiver.received.length < expected && Date.now() < deadline) await Bun.sleep(50);
  const recorded = () =>
    t.logLines.filter((line) => line.includes('"msg":"webhook delivery attempt"')).length;
  while (recorded() < expected && Date.now() < deadline) await Bun.sleep(20);
}
