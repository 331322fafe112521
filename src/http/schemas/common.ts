import { type TSchema, Type } from "@sinclair/typebox";
import { REASONS } from "../../domain/errors";
import { literalUnion } from "../../lib/literal-union";
import { QueryInteger } from "./query-integer";

/** The error body (`Error` in the OpenAPI document), used by every error response. */
export const ErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: "The HTTP status code" }),
    reason: literalUnion(REASONS, {
      description:
        "Stable machine-readable reason in snake_case (device_not_wiped, policy_name_taken, last_admin, " +
        "scope_missing, token_expired, rate_limited, validation_failed, ...): match on this, not on message. " +
        "A reason never changes once shipped.",
    }),
    message: Type.String({ description: "For people; may be reworded" }),
    details: Type.Optional(Type.String({ description: "What exactly was wrong, when known" })),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({ description: "Dotted path of the field" }),
          message: Type.String(),
          received: Type.Optional(Type.Unknown()),
        }),
        { description: "Every invalid field, for validation errors" },
      ),
    ),
    request_id: Type.String({
      description: "The request's id, also in X-Request-Id and in the server's log",
    }),
  },
  { title: "Error" },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request parameters",
  401: "Invalid or missing authentication",
  403: "Insufficient permissions (details names the missing scope)",
  404: "Resource not found",
  409: "Conflict with the resource's current state",
  413: "Request body over 1 MiB",
  429: "Rate limit exceeded",
  503: "Service unavailable",
};

/** One error response described for what the route means by it (the generic text would mislead). */
export function errorResponse(description: string): typeof ErrorSchema {
  return Type.Object(ErrorSchema.properties, { title: "Error", description });
}

/** Error responses for a route's OpenAPI document. */
export function errorResponses<const Codes extends readonly number[]>(
  ...codes: Codes
): Record<Codes[number], typeof ErrorSchema> {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      Type.Object(ErrorSchema.properties, {
        title: "Error",
        description: ERROR_DESCRIPTIONS[code] ?? "Error",
      }),
    ]),
  ) as Record<Codes[number], typeof ErrorSchema>;
}

/**
 * A redirect for the OpenAPI document: no body, and a Location header whose description says where it
 * points and names, each in backticks, the query parameters it carries (tests compare them with the
 * parameters of real redirects).
 */
export function redirectResponse(description: string, location: string) {
  return Type.Void({
    description,
    headers: { Location: Type.String({ format: "uri", description: location }) },
  });
}

export { NullableTimestamp, Timestamp, Uuid } from "../../lib/schema-types";

/**
 * The id of one kind of resource (a UUID): its validation error names the kind ("must be a policy id
 * (UUID)"), and the OpenAPI document says it in `x-id-of`.
 */
export const IdOf = (resource: "policy" | "user", description: string) =>
  Type.String({ format: "uuid", description, "x-id-of": resource });

export const IdParams = Type.Object({ id: Type.String({ description: "Resource id (UUID)" }) });

/** page (default 1) and page_size (default 20, at most 100). */
export const PageQuery = {
  page: Type.Optional(
    QueryInteger("page", { minimum: 1, maximum: 10_000_000, default: 1, description: "Page number, from 1" }),
  ),
  page_size: Type.Optional(
    QueryInteger("page_size", {
      minimum: 1,
      maximum: 100,
      default: 20,
      description: "Items per page (1-100)",
    }),
  ),
};

export function pageOf(query: { page?: number; page_size?: number }): { page: number; pageSize: number } {
  return { page: query.page ?? 1, pageSize: query.page_size ?? 20 };
}

/** A paginated list response: data, total, page, page_size, total_pages. */
export function Paginated<T extends TSchema>(item: T, description?: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      total: Type.Integer({ minimum: 0 }),
      page: Type.Integer({ minimum: 1 }),
      page_size: Type.Integer({ minimum: 1 }),
      total_pages: Type.Integer({ minimum: 0 }),
    },
    { description },
  );
}

export function paginate<T>(result: { data: T[]; total: number }, page: { page: number; pageSize: number }) {
  return {
    data: result.data,
    total: result.total,
    page: page.page,
    page_size: page.pageSize,
    total_pages: Math.ceil(result.total / page.pageSize),
  };
}

export const MessageSchema = Type.Object({ message: Type.String() });
