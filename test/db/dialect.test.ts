/**
 * The expressions the two stores write differently (src/db/dialect.ts) and the statements built on them
 * (src/db/replace-email.ts) give the same rows on SQLite and on PostgreSQL: each scenario runs on both,
 * and both must equal what a user of either store expects.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { DbOrTx } from "../../src/db/client";
import { containsText, jsonIsTrue, jsonText, selectRows } from "../../src/db/dialect";
import { replaceEmailInJson, replaceEmailLabel } from "../../src/db/replace-email";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { migratedPgDatabase, migratedSqliteDatabase } from "../helpers/pg-stores";

const sqliteStore = migratedSqliteDatabase();
const pgStore = await migratedPgDatabase();
afterAll(async () => {
  sqliteStore.close();
  await pgStore.sql.close();
});

// Domain code is typed against the SQLite schema; the PostgreSQL handle and tables stand in for them at
// run time, as they will when the service runs on PostgreSQL.
const stores = [
  { name: "sqlite", db: sqliteStore.db as DbOrTx, schema: sqliteSchema },
  {
    name: "postgresql",
    db: drizzle({ client: pgStore.sql, schema: pgSchema }) as unknown as DbOrTx,
    schema: pgSchema as unknown as typeof sqliteSchema,
  },
] as const;

const NOW = "2026-11-01T12:00:00.000Z";
const ORGANIZATION = "org-dialect";

for (const store of stores) {
  const { db, schema } = store;
  await db
    .insert(schema.organizations)
    .values({ id: ORGANIZATION, name: "Dialect", createdAt: NOW, updatedAt: NOW });
  await selectRows(
    db,
    sql.raw(`INSERT INTO devices (id, organization_id, device_name, platform, agent_version, hardware_id, status,
      last_seen, enrolled_at, vpn_public_key, compliance_status, created_at, updated_at) VALUES ${[
        "Zoë's MacBook",
        "ÉLISE-PC",
        "élise-pc",
        "Build_Server 100%",
        "BuildXServer 1000",
        "back\\slash",
      ]
        .map(
          (name, index) =>
            `('d${index}', '${ORGANIZATION}', '${name.replace(/'/g, "''")}', 'linux', '1.0', 'hw${index}', 'online', '${NOW}', '${NOW}', 'key${index}', 'unknown', '${NOW}', '${NOW}')`,
        )
        .join(", ")} RETURNING id`),
  );
}

describe.each(stores)("on $name", ({ db, schema }) => {
  test("a name search: ASCII letters without case, every other character exactly, % _ and \\ as themselves", async () => {
    const found = async (text: string) =>
      (
        await db
          .select({ name: schema.devices.deviceName })
          .from(schema.devices)
          .where(containsText(db, schema.devices.deviceName, text))
          .orderBy(asc(schema.devices.id))
      ).map((row) => row.name);
    expect(await found("macbook")).toEqual(["Zoë's MacBook"]);
    expect(await found("ZOË")).toEqual([]);
    expect(await found("élise")).toEqual(["élise-pc"]);
    expect(await found("Élise")).toEqual(["ÉLISE-PC"]);
    expect(await found("-pc")).toEqual(["ÉLISE-PC", "élise-pc"]);
    expect(await found("_server")).toEqual(["Build_Server 100%"]);
    expect(await found("100%")).toEqual(["Build_Server 100%"]);
    expect(await found("k\\s")).toEqual(["back\\slash"]);
  });

  test("JSON: a string read at a path, and true only where the value is the JSON true", async () => {
    const settings: [string, unknown][] = [
      ["json-true", { oidc: { enabled: true, client_id: "bulwark" } }],
      ["json-string", { oidc: { enabled: "true", client_id: "bulwark" } }],
      ["json-one", { oidc: { enabled: 1, client_id: "bulwark" } }],
      ["json-false", { oidc: { enabled: false, client_id: "bulwark" } }],
      ["json-other-client", { oidc: { enabled: true, client_id: "Bulwark" } }],
      ["json-empty", {}],
    ];
    await db.insert(schema.organizations).values(
      settings.map(([id, ssoSettings]) => ({
        id,
        name: id,
        ssoSettings: ssoSettings as never,
        createdAt: NOW,
        updatedAt: NOW,
      })),
    );
    const ids = settings.map(([id]) => id);
    const enabledFor = await db
      .select({ id: schema.organizations.id })
      .from(schema.organizations)
      .where(
        and(
          inArray(schema.organizations.id, ids),
          jsonIsTrue(db, schema.organizations.ssoSettings, ["oidc", "enabled"]),
          eq(jsonText(db, schema.organizations.ssoSettings, ["oidc", "client_id"]), "bulwark"),
        ),
      );
    expect(enabledFor).toEqual([{ id: "json-true" }]);
    const clientIds = await db
      .select({
        id: schema.organizations.id,
        clientId: jsonText(db, schema.organizations.ssoSettings, ["oidc", "client_id"]),
      })
      .from(schema.organizations)
      .where(inArray(schema.organizations.id, ["json-other-client", "json-empty"]))
      .orderBy(asc(schema.organizations.id));
    expect(clientIds).toEqual([
      { id: "json-empty", clientId: null },
      { id: "json-other-client", clientId: "Bulwark" },
    ]);
  });

  test("an erased email is replaced where it is a label or ends one, and nowhere else", async () => {
    const labels = ["ann@corp.test", "CI key (ann@corp.test)", "joann@corp.test", "ann@corp.test.evil", "x"];
    await db.insert(schema.enrollmentTokens).values(
      labels.map((createdBy, index) => ({
        id: `token-${index}`,
        organizationId: ORGANIZATION,
        tokenHash: `hash-${index}`,
        expiresAt: NOW,
        createdBy,
        createdAt: NOW,
      })),
    );
    await replaceEmailLabel(
      db,
      "enrollment_tokens",
      "created_by",
      sql`organization_id = ${ORGANIZATION}`,
      "ann@corp.test",
      "erased user 1",
    );
    const after = await db
      .select({ createdBy: schema.enrollmentTokens.createdBy })
      .from(schema.enrollmentTokens)
      .orderBy(asc(schema.enrollmentTokens.id));
    expect(after.map((row) => row.createdBy)).toEqual([
      "erased user 1",
      "CI key (erased user 1)",
      "joann@corp.test",
      "ann@corp.test.evil",
      "x",
    ]);

    const details = [
      { email: "ann@corp.test", note: "whole value" },
      { actor: "CI key (ann@corp.test)" },
      { email: "joann@corp.test" },
      { nested: { list: ["ann@corp.test", 3] } },
    ];
    await db.insert(schema.auditLogs).values(
      details.map((entry, index) => ({
        id: `audit-${index}`,
        organizationId: ORGANIZATION,
        actorType: "system" as const,
        action: "test.entry",
        outcome: "success" as const,
        details: entry,
        createdAt: NOW,
      })),
    );
    await replaceEmailInJson(
      db,
      "audit_logs",
      "details",
      sql`organization_id = ${ORGANIZATION}`,
      "ann@corp.test",
      "erased user 1",
    );
    const rewritten = await db
      .select({ details: schema.auditLogs.details })
      .from(schema.auditLogs)
      .orderBy(asc(schema.auditLogs.id));
    expect(rewritten.map((row) => row.details)).toEqual([
      { email: "erased user 1", note: "whole value" },
      { actor: "CI key (erased user 1)" },
      { email: "joann@corp.test" },
      { nested: { list: ["erased user 1", 3] } },
    ]);
  });
});
