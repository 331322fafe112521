/**
 * The agent's command line as a new user meets it, from the built executable: help for the agent and
 * for each of its commands, and near misses answered with the name that was meant.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { buildBinary, expectOneLine, runCommand } from "../helpers/binary";

let binary: string;

beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

const bulwark = (...args: string[]) => runCommand(binary, args, tmpdir());

/** The agent's commands, as `bulwark agent --help` lists them. */
function listedCommands(text: string): string[] {
  return [...text.matchAll(/^ {2}agent ([a-z-]+)/gm)].map((match) => match[1] as string);
}

describe("bulwark agent help", () => {
  test("bulwark agent --help, -h and bulwark help agent list the agent's commands; bare `agent` lists them and exits 2", () => {
    const help = bulwark("agent", "--help");
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" });
    expect(listedCommands(help.stdout)).toEqual([
      "enroll",
      "run",
      "status",
      "plan",
      "unenroll",
      "install-service",
      "facts",
    ]);
    for (const args of [
      ["agent", "-h"],
      ["help", "agent"],
      ["agent", "help"],
    ]) {
      const same = bulwark(...args);
      expect({ args, code: same.code, stdout: same.stdout }).toEqual({ args, code: 0, stdout: help.stdout });
    }
    const bare = bulwark("agent");
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toStartWith("bulwark: agent needs a command\n");
    expect(listedCommands(bare.stderr)).toEqual(listedCommands(help.stdout));
  });

  test("COMMAND --help (or -h, or bulwark help agent COMMAND) prints its usage and one line for each flag, exit 0", () => {
    for (const command of listedCommands(bulwark("agent", "--help").stdout)) {
      const help = bulwark("agent", command, "--help");
      expect({ command, code: help.code, stderr: help.stderr }).toEqual({ command, code: 0, stderr: "" });
      const [usage = ""] = help.stdout.split("\n");
      expect(usage).toStartWith(`Usage: bulwark agent ${command}`);
      // Every flag the usage names has a line of its own that says what it does.
      const flags = [...usage.matchAll(/--([a-z-]+)/g)].map((match) => match[1]);
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of [...flags, "help"])
        expect({
          command,
          flag,
          line: help.stdout.match(new RegExp(`^ {2}--${flag}\\b.*\\s{2}\\S.*$`, "m")),
        }).toEqual({
          command,
          flag,
          line: expect.anything(),
        });
      expect(bulwark("agent", command, "-h").stdout).toBe(help.stdout);
      expect(bulwark("help", "agent", command).stdout).toBe(help.stdout);
    }
    // Even among other flags: the help, not an enrollment.
    const enroll = bulwark("agent", "enroll", "--server", "http://127.0.0.1:9", "--token", "bwe_x", "--help");
    expect(enroll.code).toBe(0);
    expect(enroll.stdout).toContain("--ca-file PEM");
  });

  test("a mistyped flag or command: one line naming the one that was meant, exit 2", () => {
    const flag = bulwark("agent", "run", "--once", "--no-tunel");
    expect(flag.code).toBe(2);
    expectOneLine(flag.stderr, "unknown flag --no-tunel (did you mean --no-tunnel?)");
    const command = bulwark("agent", "enrol", "--server", "http://127.0.0.1:9");
    expect(command.code).toBe(2);
    expectOneLine(command.stderr, 'unknown agent command "enrol" (did you mean agent enroll?)');
    // Nothing near: the flag alone.
    expectOneLine(bulwark("agent", "status", "--verbose").stderr, "unknown flag --verbose");
    expect(bulwark("agent", "status", "--verbose").stderr).not.toContain("did you mean");
  });
});
