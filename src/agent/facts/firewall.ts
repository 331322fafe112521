import type { MachineReader } from "../root-path";
import { type FactReading, firstLine, known, type ProgramRunner, unknown } from "./fact";

/** A base chain of `nft -j list ruleset` (libnftables-json(5)); rules and other objects are not read. */
interface NftChain {
  family?: string;
  table?: string;
  name?: string;
  hook?: string;
  policy?: string;
}

/**
 * `firewall_enabled`, from the live ruleset when the agent runs on the machine itself (`nft -j list
 * ruleset`, which shows nftables and iptables-nft, and so ufw and firewalld): true with an input base
 * chain whose policy is drop, or firewalld's table; false with no input base chain at all and no legacy
 * iptables tables. Under another root, only ufw's own setting (`ENABLED=yes` in /etc/ufw/ufw.conf) says
 * true. Anything else (input chains that accept by default and filter with rules) is not judged.
 */
export async function readFirewallEnabled(
  tree: MachineReader,
  live: { isLive: boolean; runProgram: ProgramRunner },
): Promise<FactReading<boolean>> {
  let liveDetail = "the live ruleset is read on the live machine only";
  if (live.isLive) {
    const listed = await live.runProgram(["nft", "-j", "list", "ruleset"]);
    if (listed.code === 0) {
      const chains = inputChains(listed.stdout);
      const dropping = chains.find((chain) => chain.policy === "drop");
      if (dropping)
        return known(
          true,
          `nft: the ${dropping.family} ${dropping.table} ${dropping.name} chain drops by default`,
        );
      const firewalld = chains.find((chain) => chain.table === "firewalld");
      if (firewalld) return known(true, `nft: firewalld's ${firewalld.name} chain filters input`);
      const legacy = (await tree.readText("/proc/net/ip_tables_names"))?.trim();
      if (chains.length === 0 && !legacy)
        return known(false, "nft: no chain filters input, and no legacy iptables table is loaded");
      liveDetail = legacy
        ? `legacy iptables tables (${legacy.split("\n").join(", ")}) are not read`
        : "nft: the input chains accept by default; their rules are not judged";
    } else liveDetail = `nft -j list ruleset failed: ${firstLine(listed.stderr)}`;
  }
  const ufw = await tree.readText("/etc/ufw/ufw.conf");
  if (ufw !== null && /^\s*ENABLED\s*=\s*["']?yes["']?\s*$/im.test(ufw))
    return known(true, `/etc/ufw/ufw.conf: ENABLED=yes (${liveDetail})`);
  return unknown(`ufw is not enabled, and ${liveDetail}`);
}

/** The base chains hooked on input in a JSON ruleset. */
function inputChains(json: string): NftChain[] {
  const parsed = JSON.parse(json) as { nftables?: { chain?: NftChain }[] };
  return (parsed.nftables ?? [])
    .map((entry) => entry.chain)
    .filter((chain): chain is NftChain => chain?.hook === "input");
}
