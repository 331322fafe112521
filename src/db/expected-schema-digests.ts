import { embeddedMigrations } from "./migrations.generated";
import { expectedSchemaObjects, schemaDigest } from "./schema-objects";

/**
 * A Bun macro (`schema-check.ts` imports it `with { type: "macro" }`): runs when the executable is
 * bundled, and when Bun loads the source, never at a start of the executable. For each migration, the
 * digest of the schema the embedded migrations up to it define, keyed by its tag.
 */
export function expectedSchemaDigests(): Record<string, string> {
  const digests: Record<string, string> = {};
  expectedSchemaObjects(embeddedMigrations, {
    versioned: true,
    after: (tag, objects) => {
      digests[tag] = schemaDigest(objects);
    },
  });
  return digests;
}
