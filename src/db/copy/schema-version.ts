import { VERSION } from "../../version";
import { assertUsableSchema, type DatabaseSchema, schemaVersionOf } from "../migrate";
import { CopyRefused, firstLine } from "./copy-errors";

/**
 * Refuses a source whose schema is not this version's: the copy reads it with this version's schema.
 * An older one is migrated first, by the version that will serve it.
 */
export function assertCurrentSchema(
  found: DatabaseSchema,
  label: string,
  migrations: readonly { tag: string }[],
): void {
  try {
    assertUsableSchema(found, label, VERSION, migrations);
  } catch (error) {
    throw new CopyRefused(firstLine(error));
  }
  const latest = migrations.at(-1)?.tag ?? "";
  if (found.latestTag !== latest)
    throw new CopyRefused(
      `${label} has schema version ${schemaVersionOf(found.latestTag ?? "")} and this Bulwark (${VERSION}) copies schema version ${schemaVersionOf(latest)}: migrate it with this version first`,
    );
}
