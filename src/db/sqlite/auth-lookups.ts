/**
 * The reads that authenticate every request, on SQLite: prepared once per connection, shaped for the
 * planner Bun ships (see prepared.ts). The domain calls these functions and never the statements.
 */
import { eq, sql } from "drizzle-orm";
import { connectionOf, type Db, type DbOrTx } from "../client";
import { apiKeys, organizations, sessions, users } from "../schema";
import { preparedRead } from "./prepared";

// These lookups run on every request; building Drizzle's SQL costs more than running it, so they are
// prepared once per database. Each reads one table and takes the others' columns through scalar
// subqueries: SQLite as Bun ships it (3.54) prepares a join whose WHERE binds a parameter again at every
// execution, which made the session lookup ~19 µs where this form takes ~3 µs. The subqueries are
// written with qualified names: Drizzle renders a one-table select's columns unqualified, and an
// unqualified name inside a subquery could bind to the wrong table.
const ORGANIZATION_OF_USER = "FROM organizations WHERE organizations.id = users.organization_id";
const organizationPlan = sql.raw(`(SELECT organizations.plan ${ORGANIZATION_OF_USER})`);
const sessionLookup = preparedRead((db: Db) => {
  const sessionColumn = (column: string) =>
    sql`(SELECT ${sql.raw(`sessions.${column}`)} FROM sessions WHERE sessions.id = ${sql.placeholder("sessionId")})`;
  return db
    .select({
      user: users,
      plan: organizationPlan.mapWith(organizations.plan),
      requireMfa: sql
        .raw(`(SELECT organizations.require_mfa ${ORGANIZATION_OF_USER})`)
        .mapWith(organizations.requireMfa),
      sessionRevokedAt: sessionColumn("revoked_at").mapWith(sessions.revokedAt),
      signInMethod: sessionColumn("sign_in_method").mapWith(sessions.signInMethod),
      sessionUserId: sessionColumn("user_id").mapWith(sessions.userId),
    })
    .from(users)
    .where(eq(users.id, sql.placeholder("userId")));
});
const apiKeyLookup = preparedRead((db: Db) =>
  db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder("keyHash"))),
);
const keyHolderLookup = preparedRead((db: Db) =>
  db
    .select({ user: users, plan: organizationPlan.mapWith(organizations.plan) })
    .from(users)
    .where(eq(users.id, sql.placeholder("userId"))),
);

/** The user of an access token's session, with the session's state and the organization's plan. */
export function lookUpSession(db: Db, sessionId: string, userId: string) {
  return sessionLookup(db).get({ sessionId, userId });
}

/** The API key stored under this hash. */
export function lookUpApiKey(db: Db, keyHash: string) {
  return apiKeyLookup(db).get({ keyHash });
}

/** An API key's holder and the organization's plan. */
export function lookUpKeyHolder(db: Db, userId: string) {
  return keyHolderLookup(db).get({ userId });
}

const LOCKED_UNTIL =
  "SELECT locked_until AS lockedUntil FROM login_failures WHERE email = $email AND ip = $ip";

/** Until when (email, ip) is locked out of password sign-in, if it ever was. */
export function lookUpLockout(db: DbOrTx, email: string, ip: string) {
  return connectionOf(db)
    .prepare<{ lockedUntil: string | null }, [{ email: string; ip: string }]>(LOCKED_UNTIL)
    .get({ email, ip });
}
