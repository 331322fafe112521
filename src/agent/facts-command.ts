import { type CollectedFacts, FACT_NAMES } from "./facts/collect-facts";
import { currentPlatform } from "./platform";

/** The part of the check-in body that describes the machine: exactly what the next check-in sends. */
export function checkInFacts(collected: CollectedFacts): {
  os_version?: string;
  facts: CollectedFacts["facts"];
} {
  return collected.os_version === undefined
    ? { facts: collected.facts }
    : { os_version: collected.os_version, facts: collected.facts };
}

/**
 * `bulwark agent facts`: the facts the next check-in would send; as JSON, or one line per fact with its
 * value and how it was read, or `unknown: <reason>` for one left out. The tunnel is read as `run` reads
 * it: on the running machine, whatever ROOT is.
 */
export async function printFacts(options: {
  root: string;
  json: boolean;
  fromCapture?: string;
}): Promise<void> {
  const collected =
    options.fromCapture === undefined
      ? await currentPlatform().collectFacts(options.root, { liveTunnel: true })
      : await (await import("./capture")).factsFromCapture(options.fromCapture);
  if (options.json) {
    console.log(JSON.stringify(checkInFacts(collected), null, 2));
    return;
  }
  const values: Record<string, string | boolean | undefined> = {
    os_version: collected.os_version,
    ...collected.facts,
  };
  for (const name of ["os_version", ...FACT_NAMES] as const) {
    const value = values[name];
    const note = collected.notes[name] ?? "";
    console.log(value === undefined ? `${name}: unknown: ${note}` : `${name}: ${value} (${note})`);
  }
}
