/** The copy will not run: a target that is not empty, a source this version cannot read, a bad argument. */
export class CopyRefused extends Error {}

/** The copy ran and failed; the target is left as it was found (the caller says so, or what to drop). */
export class CopyFailed extends Error {}

export { firstLine } from "../../lib/error-cause";
