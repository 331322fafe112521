import { afterAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../../src/db/client";
import { firstRow } from "../../../src/db/first-row";
import { webhooks } from "../../../src/db/tables";
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
  const stored = async () =>
    (await firstRow(t.deps.db.select().from(webhooks).where(eq(webhooks.id, created.body.id))))?.secret ?? "";
  expect(await stored()).toStartWith("sealed:v1:");
  expect(await stored()).not.toContain(secret);
  expect(t.deps.secrets.open(await stored())).toBe(secret);

  // A row from before sealing existed.
  await withTransaction(
    t.deps.db,
    async (tx) =>
      await tx
        .update(webhooks)
        .set({ secret: "legacy-plain-text-secret" })
        .where(eq(webhooks.id, created.body.id)),
  );
  expect(await sealWebhookSecrets(t.deps)).toBe(1);
  expect(await stored()).toStartWith("sealed:v1:");
  expect(t.deps.secrets.open(await stored())).toBe("legacy-plain-text-secret");
  expect(await sealWebhookSecrets(t.deps)).toBe(0);
});
