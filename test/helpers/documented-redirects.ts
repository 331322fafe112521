import type { OpenApiDocument } from "./openapi-sample";

/**
 * The query parameters the OpenAPI document says a redirect's Location carries: the names its Location
 * header's description puts in backticks (src/http/schemas/common.ts, redirectResponse).
 */
export function documentedLocationParameters(
  document: OpenApiDocument,
  method: string,
  path: string,
  status: number,
): string[] {
  const location = document.paths[path]?.[method]?.responses?.[status]?.headers?.Location;
  return [...String(location?.description ?? "").matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
}
