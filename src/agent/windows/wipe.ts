/**
 * The work profile's erasure on Windows: the people's profile folders from the registry (profiles.ts),
 * the policy's work paths placed in them, then erased without following links or junctions (erase.ts).
 */
import type { ProgramRunner } from "../facts/fact";
import type { ErasureReport } from "../run/erase-work-profile";
import { eraseWindowsTargets, windowsWorkTargets } from "./erase";
import { readWindowsProfiles } from "./profiles";

/** Erases the policy's work paths and enrollment's --work-dir folders; an unreadable profile list fails each `~/` path. */
export async function eraseWindowsWorkProfile(
  workPaths: readonly string[],
  workDirs: readonly string[],
  run: ProgramRunner,
): Promise<ErasureReport> {
  const needsProfiles = workPaths.some((path) => path.startsWith("~/"));
  const list = needsProfiles ? await readWindowsProfiles(run, process.env) : { profiles: [], problems: [] };
  // A profile list that could not be read fails each `~/` path (windowsWorkTargets says why).
  return eraseWindowsTargets(windowsWorkTargets(workPaths, workDirs, list, process.env));
}
