import { and, count, eq, isNull, ne } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { selectNewestFirstPage } from "../../db/paged-query";
import { users } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { hashPassword, verifyPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import {
  clearPasswordAttempts,
  reservePasswordAttempt,
  settleFailedPasswordAttempt,
} from "../auth/login-throttle";
import type { Principal } from "../auth/principal";
import { revokeUserApiKeys } from "../auth/revoke-user-api-keys";
import { hasScope, ROLE_SCOPES, type Role } from "../auth/scopes";
import { revokeUserSessions } from "../auth/sign-out";
import type { Actor, DomainDeps } from "../deps";
import { unassignUserDevices } from "../devices/unassign-user-devices";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from "../errors";
import { parseEmail } from "./email";
import { passwordHashCost } from "./password-hash-cost";

export const MIN_PASSWORD_LENGTH = 12;

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: Role;
  organization_id: string;
  disabled: boolean;
  restricted: boolean;
  last_login_at: string | null;
  created_at: string;
  updated_at: string;
}

type UserRow = typeof users.$inferSelect;

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    organization_id: row.organizationId,
    disabled: row.isDisabled,
    restricted: row.isRestricted,
    last_login_at: row.lastLoginAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function assertPasswordStrength(password: string, field: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError("invalid request body", [
      { field, message: `must be at least ${MIN_PASSWORD_LENGTH} characters` },
    ]);
  }
}

/**
 * A caller may only hand out a role, or manage a user holding one, whose scopes it has itself: otherwise
 * an API key with users:write could create an admin and sign in as it.
 */
function assertCanManageRole(principal: Principal, role: Role): void {
  const missing = ROLE_SCOPES[role].filter((scope) => !hasScope(principal.scopes, scope));
  if (missing.length > 0) {
    throw new ForbiddenError(
      "scope_missing",
      "insufficient permissions",
      `managing the role ${role} needs scopes you do not have: ${missing.join(", ")}`,
    );
  }
}

function findLiveUser(db: DbOrTx, organizationId: string, id: string): UserRow {
  const row = db
    .select()
    .from(users)
    .where(and(eq(users.id, id), eq(users.organizationId, organizationId), isNull(users.deletedAt)))
    .get();
  if (!row) throw new NotFoundError("user");
  return row;
}

/** Inserts a user row (email unique across the service, password hashed by the caller). */
export function insertUser(
  tx: DbOrTx,
  now: Date,
  input: { organizationId: string; email: string; name: string; role: Role; passwordHash: string },
): UserRow {
  const email = parseEmail(input.email);
  if (tx.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) {
    throw new ConflictError("email_taken", "a user with this email already exists");
  }
  const timestamp = toIso(now);
  const row: UserRow = {
    id: newId(),
    organizationId: input.organizationId,
    email,
    name: input.name,
    role: input.role,
    passwordHash: input.passwordHash,
    isDisabled: false,
    isRestricted: false,
    tokensValidAfter: null,
    lastLoginAt: null,
    createdAt: timestamp,
    updatedAt: timestamp,
    deletedAt: null,
  };
  tx.insert(users).values(row).run();
  return row;
}

export function listUsers(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
) {
  const filter = and(eq(users.organizationId, organizationId), isNull(users.deletedAt));
  const { data: rows, total } = selectNewestFirstPage(deps.db, users, filter, page);
  return { data: rows.map(toUserView), total };
}

export function getUser(deps: DomainDeps, organizationId: string, id: string): UserView {
  return toUserView(findLiveUser(deps.db, organizationId, id));
}

export async function createUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { email: string; name: string; role: Role; password: string },
): Promise<UserView> {
  const organizationId = principal.organizationId;
  assertCanManageRole(principal, input.role);
  assertPasswordStrength(input.password, "password");
  const passwordHash = await hashPassword(input.password, passwordHashCost(deps));
  const now = deps.clock.now();
  return withTransaction(deps.db, (tx) => {
    const row = insertUser(tx, now, {
      organizationId,
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash,
    });
    recordAudit(tx, now, actor, {
      action: "user.create",
      targetType: "user",
      targetId: row.id,
      details: { email: row.email, role: row.role },
    });
    return toUserView(row);
  });
}

/** Other enabled admins than `userId` in the organization. */
function countOtherActiveAdmins(tx: DbOrTx, organizationId: string, userId: string): number {
  return (
    tx
      .select({ value: count() })
      .from(users)
      .where(
        and(
          eq(users.organizationId, organizationId),
          eq(users.role, "admin"),
          eq(users.isDisabled, false),
          isNull(users.deletedAt),
          ne(users.id, userId),
        ),
      )
      .get()?.value ?? 0
  );
}

const LAST_ADMIN = "the last admin of an organization cannot be demoted, disabled or deleted";

export function updateUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  id: string,
  input: { name?: string; role?: Role; disabled?: boolean },
): UserView {
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  return withTransaction(deps.db, (tx) => {
    const row = findLiveUser(tx, organizationId, id);
    assertCanManageRole(principal, row.role);
    if (input.role !== undefined) assertCanManageRole(principal, input.role);
    const losesAdmin =
      row.role === "admin" &&
      !row.isDisabled &&
      ((input.role !== undefined && input.role !== "admin") || input.disabled === true);
    if (losesAdmin && countOtherActiveAdmins(tx, organizationId, id) === 0)
      throw new ConflictError("last_admin", LAST_ADMIN);
    const next = {
      name: input.name ?? row.name,
      role: input.role ?? row.role,
      isDisabled: input.disabled ?? row.isDisabled,
      updatedAt: toIso(now),
    };
    tx.update(users).set(next).where(eq(users.id, id)).run();
    if (input.disabled === true && !row.isDisabled) revokeUserSessions(tx, now, id, "user disabled");
    recordAudit(tx, now, actor, {
      action: "user.update",
      targetType: "user",
      targetId: id,
      details: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
    });
    return toUserView({ ...row, ...next });
  });
}

/** Deletes a user: the account is closed, its sessions and API keys end, its devices become unassigned. */
export function deleteUser(deps: DomainDeps, principal: Principal, actor: Actor, id: string): void {
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  withTransaction(deps.db, (tx) => {
    const row = findLiveUser(tx, organizationId, id);
    assertCanManageRole(principal, row.role);
    if (row.role === "admin" && !row.isDisabled && countOtherActiveAdmins(tx, organizationId, id) === 0) {
      throw new ConflictError("last_admin", LAST_ADMIN);
    }
    closeAccount(tx, now, row.id);
    recordAudit(tx, now, actor, {
      action: "user.delete",
      targetType: "user",
      targetId: id,
      details: { email: row.email },
    });
  });
}

/** Frees the email, ends sessions and keys, unassigns devices; the row stays for the audit trail. */
export function closeAccount(tx: DbOrTx, now: Date, userId: string): void {
  const timestamp = toIso(now);
  tx.update(users)
    .set({
      deletedAt: timestamp,
      updatedAt: timestamp,
      email: `deleted-${userId}@deleted.invalid`,
      name: "Deleted user",
    })
    .where(eq(users.id, userId))
    .run();
  revokeUserSessions(tx, now, userId, "user deleted");
  revokeUserApiKeys(tx, now, userId);
  unassignUserDevices(tx, now, userId);
}

/** Changes the caller's own password; every other session of the user ends. */
export async function changeOwnPassword(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  // A key holder proving the password would turn a narrow key into the whole account.
  if (principal.kind === "api_key")
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot change passwords",
      "sign in as the user to change the password",
    );
  const row = findLiveUser(deps.db, principal.organizationId, principal.userId);
  // The current password is a guessable secret: the sign-in throttle guards it here too.
  const ip = actor.ip ?? "unknown";
  reservePasswordAttempt(deps, row.email, ip);
  if (!(await verifyPassword(input.currentPassword, row.passwordHash))) {
    withTransaction(deps.db, (tx) => {
      settleFailedPasswordAttempt(deps, tx, row.email, ip);
      recordAudit(tx, deps.clock.now(), actor, {
        action: "user.password_change",
        outcome: "failure",
        targetType: "user",
        targetId: row.id,
      });
    });
    throw new ValidationError("invalid request body", [
      { field: "current_password", message: "is not correct" },
    ]);
  }
  assertPasswordStrength(input.newPassword, "new_password");
  const passwordHash = await hashPassword(input.newPassword, passwordHashCost(deps));
  const now = deps.clock.now();
  withTransaction(deps.db, (tx) => {
    tx.update(users)
      .set({ passwordHash, updatedAt: toIso(now) })
      .where(eq(users.id, row.id))
      .run();
    revokeUserSessions(tx, now, row.id, "password changed", principal.sessionId);
    clearPasswordAttempts(tx, row.email, ip);
    recordAudit(tx, now, actor, { action: "user.password_change", targetType: "user", targetId: row.id });
  });
}
