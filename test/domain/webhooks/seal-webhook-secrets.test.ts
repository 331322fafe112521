import { afterAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../../src/db/client";
import { webhooks } from "../../../src/db/schema";
import { sealWebhookSecrets } from "../../../src/domain/webhooks/seal-webhook-secrets";
import { createTestApp } from "../../helpers/test-app";

const t = await createTestApp({ webhooks: { allow_private_targets: true } });
afterAll(() => t.close());

test("secrets are sealed when written, and ones stored in plain text before are sealed at start", async () => {
  const org = await t.createOrganization();
  const secret = "written-through-the-api-123";
  const created = await t.request("POST", "/api/v1/webhooks", {
    token: org.adminToken,
    body: { url: "http://127.0.0.1:9/hook", events: ["*"], secret },
  });
  const stored = () =>
    t.deps.db.select().from(webhooks).where(eq(webhooks.id, created.body.id)).get()?.secret ?? "";
  expect(stored()).toStartWith("sealed:v1:");
  expect(stored()).not.toContain(secret);
  expect(t.deps.secrets.open(stored())).toBe(secret);

  // A row from before sealing existed.
  await withTransaction(t.deps.db, (tx) =>
    tx
      .update(webhooks)
      .set({ secret: "legacy-plain-text-secret" })
      .where(eq(webhooks.id, created.body.id))
      .run(),
  );
  expect(await sealWebhookSecrets(t.deps)).toBe(1);
  expect(stored()).toStartWith("sealed:v1:");
  expect(t.deps.secrets.open(stored())).toBe("legacy-plain-text-secret");
  expect(await sealWebhookSecrets(t.deps)).toBe(0);
});
