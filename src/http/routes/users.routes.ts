import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { clearUserLockout, resetUserMfa } from "../../domain/mfa/manage-mfa";
import { changeOwnPassword } from "../../domain/users/change-own-password";
import { createUser } from "../../domain/users/create-user";
import { deleteUser } from "../../domain/users/delete-user";
import { getUser, listUsers } from "../../domain/users/list-users";
import { updateUser } from "../../domain/users/update-user";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import {
  errorResponses,
  IdParams,
  MessageSchema,
  PageQuery,
  Paginated,
  pageOf,
  paginate,
} from "../schemas/common";
import { ChangePasswordBody, CreateUserBody, UpdateUserBody, UserSchema } from "./users.schemas";

/** /api/v1/users: the organization's users, and the caller's own account. */
export function userRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/users", tags: ["Users"] })
    .use(security)
    .get("/me", async ({ principal }) => await getUser(deps, principal.organizationId, principal.userId), {
      access: "self",
      response: { 200: UserSchema, ...errorResponses(401, 429) },
      detail: { summary: "The signed-in user" },
    })
    .put(
      "/me/password",
      async ({ body, principal, actor }) => {
        await changeOwnPassword(deps, principal, actor, {
          currentPassword: body.current_password,
          newPassword: body.new_password,
        });
        return { message: "password changed; your other sessions have been signed out" };
      },
      {
        access: "authenticated",
        body: ChangePasswordBody,
        response: { 200: MessageSchema, ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "Change your password",
          description:
            "Every other session of yours ends (their refresh tokens are revoked). A wrong current_password is a 400 and counts toward the sign-in lockout (429 after 5). API keys cannot change passwords (403).",
        },
      },
    )
    .get(
      "",
      async ({ query, principal }) => {
        const page = pageOf(query);
        return paginate(await listUsers(deps, principal.organizationId, page), page);
      },
      {
        access: "users:read",
        query: Type.Object(PageQuery),
        response: { 200: Paginated(UserSchema), ...errorResponses(400, 401, 403, 429) },
        detail: { summary: "List users" },
      },
    )
    .post(
      "",
      async ({ body, principal, actor, set }) => {
        set.status = 201;
        return createUser(deps, principal, actor, body);
      },
      {
        access: "users:write",
        body: CreateUserBody,
        response: { 201: UserSchema, ...errorResponses(400, 401, 403, 409, 429) },
        detail: {
          summary: "Create a user",
          description:
            "409 if the email is already in use; 403 if the role carries scopes the caller does not have.",
        },
      },
    )
    .get("/:id", async ({ params, principal }) => await getUser(deps, principal.organizationId, params.id), {
      access: "users:read",
      params: IdParams,
      response: { 200: UserSchema, ...errorResponses(401, 403, 404, 429) },
      detail: { summary: "Get a user" },
    })
    .patch(
      "/:id",
      ({ params, body, principal, actor }) => updateUser(deps, principal, actor, params.id, body),
      {
        access: "users:write",
        params: IdParams,
        body: UpdateUserBody,
        response: { 200: UserSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Change a user's name, role or disabled flag, or lift a restriction",
          description:
            "409 when it would leave the organization without an enabled admin; 403 when the user's current or new role carries scopes the caller does not have.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ params, principal, actor, set }) => {
        await deleteUser(deps, principal, actor, params.id);
        set.status = 204;
      },
      {
        access: "users:write",
        params: IdParams,
        response: { 204: Type.Void({ description: "Deleted" }), ...errorResponses(401, 403, 404, 409, 429) },
        detail: {
          summary: "Delete a user",
          description:
            "Their sessions and API keys end and their devices become unassigned. 409 for the last admin.",
        },
      },
    )
    .delete(
      "/:id/mfa",
      async ({ params, principal, actor, set }) => {
        await resetUserMfa(deps, principal, actor, params.id);
        set.status = 204;
      },
      {
        access: "users:write",
        params: IdParams,
        response: {
          204: Type.Void({ description: "Every factor removed" }),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          summary: "Remove all of a user's second factors (a lost phone)",
          description:
            "Their TOTP app, passkeys, security keys and recovery codes go; they sign in with the password alone (and, where the organization requires MFA, must set a factor up first). Audited.",
        },
      },
    )
    .delete(
      "/:id/lockout",
      async ({ params, principal, actor, set }) => {
        await clearUserLockout(deps, principal, actor, params.id);
        set.status = 204;
      },
      {
        access: "users:write",
        params: IdParams,
        response: {
          204: Type.Void({ description: "Lockout lifted" }),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          summary: "Lift a user's sign-in lockout early",
          description:
            "Forgets the wrong passwords and wrong MFA codes counted against the user from every address, so the 429 ends now. Audited.",
        },
      },
    );
}
