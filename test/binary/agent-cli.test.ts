/**
 * The agent's command line as a new user meets it, from the built executable: help for the agent and
 * for each of its commands, and near misses answered with the name that was meant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";
import {
  buildBinary,
  callServer,
  expectOneLine,
  type RunningServer,
  runCommand,
  runCommandAsync,
  startServer,
} from "../helpers/binary";

const ADMIN = { email: "agent-cli@example.com", password: "agent-cli-password-1" };
/** The unprivileged user the agent is run as by someone who forgot sudo. */
const NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];

let binary: string;
/** The same executable, in a folder every user may enter (the test's build folder is root's only). */
let sharedBinary: string;
let server: RunningServer;
let adminToken: string;

beforeAll(async () => {
  binary = await buildBinary();
  const shared = mkdtempSync(join(tmpdir(), "bulwark-agent-cli-bin-"));
  chmodSync(shared, 0o755);
  sharedBinary = join(shared, "bulwark");
  try {
    linkSync(binary, sharedBinary);
  } catch {
    copyFileSync(binary, sharedBinary);
  }
  chmodSync(sharedBinary, 0o755);
  server = await startServer(binary, mkdtempSync(join(tmpdir(), "bulwark-agent-cli-server-")), {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
  });
  adminToken = (await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, ADMIN))
    .token;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeMachines();
});

const bulwark = (...args: string[]) => runCommand(binary, args, tmpdir());

/** Runs the executable as user nobody (uid 65534), as a user who forgot sudo would. */
function asNobody(...args: string[]) {
  const run = Bun.spawnSync([...NOBODY, sharedBinary, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir() },
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** A machine every user may read (its ROOT), with a name of its own. */
function laptop(name: string): string {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: { "etc/hostname": `${name}\n`, "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n` },
  });
  chmodSync(dirname(root), 0o755);
  return root;
}

/** A folder of root's that others may enter but not write in, as /var/lib is. */
function rootsFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-agent-cli-var-"));
  chmodSync(folder, 0o755);
  return folder;
}

/** `bulwark agent enroll` on this machine and state folder, with this server URL and token. */
const enrollArgs = (url: string, token: string, root: string, stateDir: string) => [
  "agent",
  ...["enroll", "--server", url, "--token", token],
  ...["--root", root, "--state-dir", stateDir],
];

const enrollmentToken = async () =>
  (await callServer<{ token: string }>(server, "POST", "/api/v1/enrollment-tokens", adminToken, {})).token;

const devicesNamed = async (name: string) =>
  (await callServer<{ data: unknown[] }>(server, "GET", `/api/v1/devices?q=${name}`, adminToken)).data;

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
      "capture",
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
      const flags = [...usage.matchAll(/--([a-z0-9-]+)/g)].map((match) => match[1]);
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

describe("the state folder, as a user who cannot use it", () => {
  test("enroll without root is refused before the server is asked: exit 2, no device, nothing written; then sudo enrolls with the same token", async () => {
    const name = `nobody-laptop-${crypto.randomUUID().slice(0, 8)}`;
    const root = laptop(name);
    const token = await enrollmentToken();
    const varLib = rootsFolder();
    const state = join(varLib, "bulwark-agent");
    // A folder it would have to create, and one root made already (0700): neither can take an identity.
    const made = join(varLib, "made");
    mkdirSync(made, { mode: 0o700 });
    for (const stateDir of [state, made]) {
      const refused = asNobody(...enrollArgs(server.url, token, root, stateDir));
      expect({ stateDir, code: refused.code }).toEqual({ stateDir, code: 2 });
      expectOneLine(refused.stderr, `cannot write ${stateDir}: run as root (sudo)`);
    }
    expect(existsSync(state)).toBe(false);
    expect(readdirSync(made)).toEqual([]);
    expect(await devicesNamed(name)).toEqual([]);
    // The token was not spent and the hardware id is not taken: root enrolls this machine with them.
    const enrolled = runCommand(binary, enrollArgs(server.url, token, root, state), tmpdir());
    expect({ code: enrolled.code, stderr: enrolled.stderr }).toMatchObject({ code: 0 });
    expect(await devicesNamed(name)).toHaveLength(1);
  });

  test("status, run, plan and unenroll of root's 0700 state folder: 'run as root', exit 2, never 'not enrolled'; a --state-dir that is a file says so", async () => {
    const root = laptop("kept-laptop");
    const state = join(rootsFolder(), "bulwark-agent");
    const enrolled = runCommand(
      binary,
      enrollArgs(server.url, await enrollmentToken(), root, state),
      tmpdir(),
    );
    expect(enrolled.code, enrolled.stderr).toBe(0);
    for (const command of [
      ["status"],
      ["status", "--json"],
      ["run", "--once"],
      ["run", "--dry-run"],
      ["plan"],
      ["unenroll"],
    ]) {
      const refused = asNobody("agent", ...command, "--root", root, "--state-dir", state);
      expect({ command, code: refused.code, stdout: refused.stdout }).toEqual({
        command,
        code: 2,
        stdout: "",
      });
      expectOneLine(refused.stderr, `cannot read ${state}: run as root (sudo)`);
    }
    // Root still has its enrollment: nothing was touched.
    expect(
      JSON.parse(runCommand(binary, ["agent", "status", "--json", "--state-dir", state], tmpdir()).stdout)
        .state,
    ).toBe("enrolled");

    const file = join(rootsFolder(), "state.json");
    writeFileSync(file, "{}");
    for (const command of [
      ["status"],
      ["run", "--once"],
      ["enroll", "--server", server.url, "--token", "bwe_x"],
    ]) {
      const refused = runCommand(
        binary,
        ["agent", ...command, "--root", root, "--state-dir", file],
        tmpdir(),
      );
      expect({ command, code: refused.code }).toEqual({ command, code: 2 });
      expectOneLine(refused.stderr, `--state-dir ${file} is a file, not a folder`);
    }
  });
});

describe("a server that cannot be reached", () => {
  test("enroll says why and what to do, the runtime's words after it: exit 4, nothing written", async () => {
    const root = laptop("unreached-laptop");
    const port = new URL(server.url).port;
    for (const [url, expected] of [
      [
        "http://127.0.0.1:9",
        "nothing listens at 127.0.0.1:9: is the server running, and is the URL right? (ECONNREFUSED",
      ],
      [
        `https://127.0.0.1:${port}`,
        `the TLS handshake failed: does the server speak https on port ${port}, or only http? (`,
      ],
      [
        "http://bulwark.invalid",
        "cannot resolve bulwark.invalid: is the name right, and does this machine's DNS work? (",
      ],
    ] as const) {
      const stateDir = join(rootsFolder(), "state");
      // A name that resolves nowhere is another machine's: plain http to it needs --insecure-http.
      const insecure = url.startsWith("http://bulwark.invalid") ? ["--insecure-http"] : [];
      const failed = runCommand(binary, [...enrollArgs(url, "bwe_x", root, stateDir), ...insecure], tmpdir());
      expect({ url, code: failed.code }).toEqual({ url, code: 4 });
      // --insecure-http says first, on a line of its own, what travels unprotected.
      const [warning, ...rest] = failed.stderr.split("\n");
      if (insecure.length > 0) expect(warning).toStartWith(`Warning: ${url} is plain http (--insecure-http)`);
      expectOneLine(insecure.length > 0 ? rest.join("\n") : failed.stderr, expected);
      expect(failed.stderr).toContain("nothing was written");
      expect(existsSync(stateDir)).toBe(false);
    }
  });
});

describe("a URL that is not a Bulwark server's base URL", () => {
  test("a path added to the URL, or another web server: exit 4 saying which address to give, not 'refused'", async () => {
    const root = laptop("wrong-url-laptop");
    // Another web server: a page for a 404, a page for everything, a JSON 404 of its own.
    const other = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => {
        const path = new URL(request.url).pathname;
        if (path.startsWith("/everything/"))
          return new Response("<!doctype html><p>Welcome", { headers: { "content-type": "text/html" } });
        if (path.startsWith("/json/")) return Response.json({ error: "Not Found" }, { status: 404 });
        return new Response("<html><body>404 Not Found</body></html>", {
          status: 404,
          headers: { "content-type": "text/html" },
        });
      },
    });
    try {
      const token = await enrollmentToken();
      for (const [url, answered] of [
        [`${server.url}/api/v1`, "404 route_not_found"],
        [`${server.url}/console/`, "405 method_not_allowed"],
        [`http://127.0.0.1:${other.port}`, "HTTP 404, not Bulwark's JSON error"],
        [`http://127.0.0.1:${other.port}/json/`, "HTTP 404, not Bulwark's JSON error"],
        [`http://127.0.0.1:${other.port}/everything/`, "a success that is not JSON"],
      ] as const) {
        const stateDir = join(rootsFolder(), "state");
        // Not spawnSync: the other server answers from this process.
        const wrong = await runCommandAsync(binary, enrollArgs(url, token, root, stateDir), tmpdir());
        expect({ url, code: wrong.code }).toEqual({ url, code: 4 });
        expectOneLine(
          wrong.stderr,
          `${url} is not a Bulwark server's base URL: give the address the console is served from, without /console or /api/v1 (`,
        );
        expect(wrong.stderr).toContain(answered);
        expect(existsSync(stateDir)).toBe(false);
      }
      // The address the console is served from enrolls, with the same token.
      const right = runCommand(
        binary,
        enrollArgs(server.url, token, root, join(rootsFolder(), "state")),
        tmpdir(),
      );
      expect(right.code, right.stderr).toBe(0);
    } finally {
      other.stop(true);
    }
  });
});
