/**
 * A wipe, from the built executable against a real `bulwark serve`: it erases exactly the policy's work
 * paths (`~` for each local user of ROOT/etc/passwd), reports what it erased and whom it told, and can
 * never be turned against files outside them: a work folder replaced by a link, a link in a work path,
 * and a racer swapping a folder and a link with renameat2(RENAME_EXCHANGE) while 20 wipes run leave every
 * root-only file as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines, snapshot } from "../helpers/agent-machine";
import { buildBinary, callServer, type RunningServer, runCommand, startAgentServer } from "../helpers/binary";

const ADMIN = { email: "wipe-admin@example.com", password: "correct-horse-battery" };
const PASSWD = [
  "root:x:0:0:root:/root:/bin/bash",
  "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
  "ann:x:1000:1000:Ann:/home/ann:/bin/bash",
  "bob:x:1001:1001:Bob:/home/bob:/bin/bash",
  "",
].join("\n");
const WORK_PATHS = ["~/Work", "~/.config/Slack", "/srv/projects/*/private"];

let binary: string;
let server: RunningServer;
let adminToken: string;

beforeAll(async () => {
  binary = await buildBinary();
  ({ server, adminToken } = await startAgentServer(binary, "bulwark-agent-wipe-", ADMIN, {
    BULWARK_RATE_LIMIT_ENROLLMENTS_PER_MINUTE: "1000",
  }));
  const policy = await callServer(server, "GET", "/api/v1/policies/default", adminToken);
  await callServer(server, "PUT", `/api/v1/policies/${policy.id}`, adminToken, {
    policy_data: { wipe: { work_paths: WORK_PATHS } },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeMachines();
});

function agent(root: string, stateDir: string, ...args: string[]) {
  return runCommand(binary, ["agent", ...args, "--root", root, "--state-dir", stateDir], tmpdir());
}

/** A machine with two local users, and root-only files the wipe must never touch. */
function machineWithUsers() {
  return buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/hostname": "wipe-laptop\n",
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
      "etc/hosts": "127.0.0.1 localhost\n",
      "etc/passwd": PASSWD,
      "root/secret/credentials": "root's own",
      "root/secret/deeper/key": "root's key",
      "root/Slack/token": "root's slack",
    },
    folders: ["home/ann", "home/bob"],
  });
}

/** Enrolls ROOT from a new state folder and runs one cycle (the policy is then known): its state folder and device id. */
async function enroll(root: string, ...flags: string[]) {
  const stateDir = join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "state");
  const { token } = await callServer<{ token: string }>(
    server,
    "POST",
    "/api/v1/enrollment-tokens",
    adminToken,
    {},
  );
  // A wipe the racer made fail keeps its device: each enrollment is a device of its own.
  const enrolled = agent(
    root,
    stateDir,
    "enroll",
    "--server",
    server.url,
    "--token",
    token,
    "--hardware-id",
    crypto.randomUUID(),
    ...flags,
  );
  expect(enrolled.code, enrolled.stderr).toBe(0);
  const run = agent(root, stateDir, "run", "--once", "--no-tunnel");
  expect(run.code, run.stderr).toBe(0);
  return { stateDir, deviceId: enrolled.stdout.trim() };
}

function write(root: string, path: string, content: string) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

async function requestWipe(deviceId: string, notifyUser: boolean) {
  return await callServer<{ wipe_id: string }>(
    server,
    "POST",
    `/api/v1/devices/${deviceId}/wipe`,
    adminToken,
    {
      reason: "laptop stolen",
      notify_user: notifyUser,
    },
  );
}

async function wipeOf(deviceId: string, wipeId: string) {
  return await callServer(server, "GET", `/api/v1/devices/${deviceId}/wipe/${wipeId}`, adminToken);
}

describe("a wipe erases the policy's work paths", () => {
  test("each user's work paths are emptied, nothing else is, and the report says what went and whom it told", async () => {
    const root = machineWithUsers();
    const { stateDir, deviceId } = await enroll(root);
    write(root, "home/ann/Work/plan.txt", "12345");
    write(root, "home/ann/Work/q3/budget.txt", "1234567");
    write(root, "home/ann/.config/Slack/cookies", "c");
    write(root, "home/ann/Documents/personal.txt", "mine");
    write(root, "srv/projects/apollo/private/p.txt", "abc");
    write(root, "srv/projects/apollo/public/readme", "keep");
    mkdirSync(join(root, "srv/projects/gemini"), { recursive: true });
    const outside = snapshot(join(root, "root"));
    const wipe = await requestWipe(deviceId, true);

    const run = agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("wiped (laptop stolen): 4 files (16 bytes) erased in 3 of 6 work paths");

    expect(readdirSync(join(root, "home/ann/Work"))).toEqual([]);
    expect(readdirSync(join(root, "home/ann/.config/Slack"))).toEqual([]);
    expect(readdirSync(join(root, "srv/projects/apollo/private"))).toEqual([]);
    expect(readFileSync(join(root, "home/ann/Documents/personal.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(root, "srv/projects/apollo/public/readme"), "utf8")).toBe("keep");
    expect(snapshot(join(root, "root"))).toEqual(outside);

    const polled = await wipeOf(deviceId, wipe.wipe_id);
    expect(polled.status).toBe("completed");
    // The device's page claims nothing of what it reported before: not the tunnel, not a compliance.
    const wiped = await callServer(server, "GET", `/api/v1/devices/${deviceId}`, adminToken);
    expect(wiped).toMatchObject({
      status: "wiped",
      facts: null,
      compliance: { status: "unknown", violations: [] },
    });
    expect(wiped.enforcement).toBeNull();
    const byPath = Object.fromEntries(
      polled.report.paths.map((entry: { path: string }) => [entry.path, entry]),
    );
    expect(byPath["/home/ann/Work"]).toMatchObject({ outcome: "erased", files: 2, bytes: 12, folders: 1 });
    expect(byPath["/home/ann/.config/Slack"]).toMatchObject({ outcome: "erased", files: 1, bytes: 1 });
    expect(byPath["/home/bob/Work"]).toMatchObject({ outcome: "absent", files: 0 });
    expect(byPath["/home/bob/.config/Slack"]).toMatchObject({ outcome: "absent" });
    expect(byPath["/srv/projects/apollo/private"]).toMatchObject({ outcome: "erased", files: 1, bytes: 3 });
    expect(byPath["/srv/projects/gemini/private"]).toMatchObject({ outcome: "absent" });
    expect(polled.report).toMatchObject({ files: 4, bytes: 16 });
    // Whom it told is what the machine had: `who` lists the terminals logged in here.
    const logins = Bun.spawnSync(["who"]).stdout.toString().trim();
    expect(polled.report.notification.requested).toBe(true);
    if (logins === "") {
      expect(polled.report.notification).toMatchObject({
        sessions: 0,
        methods: [],
        detail: "no one was logged in",
      });
      expect(run.stderr).toContain("0 sessions notified (no one was logged in)");
    } else expect(polled.report.notification.sessions).toBeGreaterThan(0);

    // Status after the wipe says only what is true now: nothing enforced, nothing scheduled.
    const status = JSON.parse(agent(root, stateDir, "status", "--json").stdout);
    expect(status).toMatchObject({ state: "wiped", enforcement: [], next_checkin_at: null, policy: null });
    const said = agent(root, stateDir, "status").stdout;
    expect(said).toContain(": wiped");
    expect(said).not.toContain("enforced");
    expect(said).not.toContain("next:");

    // The audit trail and the device's log carry the counts.
    const logs = await callServer(
      server,
      "GET",
      `/api/v1/devices/${deviceId}/logs?event=wipe.completed`,
      adminToken,
    );
    expect(logs.data[0].details).toMatchObject({ files_erased: 4, bytes_erased: 16 });
  });

  test("notify_user: a logged-in terminal is shown the notice (wall), and the report counts the session it reached", async () => {
    const root = machineWithUsers();
    const { stateDir, deviceId } = await enroll(root);
    write(root, "home/ann/Work/plan.txt", "12345");
    // A real terminal: script(1) gives `sleep` a pseudo-terminal and logs all that appears on it.
    const folder = mkdtempSync(join(tmpdir(), "bulwark-wipe-session-"));
    const log = join(folder, "terminal.log");
    const terminal = Bun.spawn(["script", "-q", "-f", "-c", "tty; sleep 60", log], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      let tty = "";
      for (let attempt = 0; attempt < 100 && tty === ""; attempt++) {
        tty = /\/dev\/(pts\/\d+)/.exec(existsSync(log) ? readFileSync(log, "utf8") : "")?.[1] ?? "";
        if (tty === "") await Bun.sleep(50);
      }
      expect(tty).not.toBe("");
      // Ann logged in on it, as login(1) records a session in utmp (written by utmpdump from its text form).
      const record = `[7] [${String(terminal.pid).padStart(5, "0")}] [ts/0] [ann     ] [${tty.padEnd(8)}] [                    ] [0.0.0.0        ] [2026-12-07T09:00:00,000000+00:00]\n`;
      const utmp = join(folder, "utmp");
      const dumped = Bun.spawnSync(["sh", "-c", `utmpdump -r > ${utmp}`], { stdin: Buffer.from(record) });
      expect(dumped.exitCode).toBe(0);
      const wipe = await requestWipe(deviceId, true);
      // The agent runs in a mount namespace whose /run holds that utmp (no logind there: who and wall).
      const run = Bun.spawnSync([
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        `mount -t tmpfs none /run && cp ${utmp} /run/utmp && exec "$0" "$@"`,
        binary,
        "agent",
        "run",
        "--once",
        "--no-tunnel",
        "--root",
        root,
        "--state-dir",
        stateDir,
      ]);
      expect(run.exitCode, run.stderr.toString()).toBe(0);
      expect(run.stderr.toString()).toContain("1 session notified");
      for (
        let attempt = 0;
        attempt < 100 && !readFileSync(log, "utf8").includes("work data is being erased");
        attempt++
      )
        await Bun.sleep(50);
      expect(readFileSync(log, "utf8")).toContain("This computer's work data is being erased");
      const polled = await wipeOf(deviceId, wipe.wipe_id);
      expect(polled.report.notification).toEqual({ requested: true, sessions: 1, methods: ["wall"] });
    } finally {
      terminal.kill();
      await terminal.exited;
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  test("a wipe without notify_user tells no one, and says so", async () => {
    const root = machineWithUsers();
    const { stateDir, deviceId } = await enroll(root);
    const wipe = await requestWipe(deviceId, false);
    expect(agent(root, stateDir, "run", "--once", "--no-tunnel").code).toBe(0);
    const polled = await wipeOf(deviceId, wipe.wipe_id);
    expect(polled.report.notification).toEqual({ requested: false, sessions: 0, methods: [] });
    expect(polled.report.files).toBe(0);
  });
});

describe("a wipe never follows a link", () => {
  test("a work folder replaced by a link, and a link on the way to a work path, leave root's files alone", async () => {
    const root = machineWithUsers();
    // Ann's work folder named at enrollment too: the machine path, walked the same way.
    const { stateDir, deviceId } = await enroll(root, "--work-dir", join(root, "home/ann/Work"));
    chmodSync(join(root, "root"), 0o700);
    // Ann's work folder is a link to root's secrets; Bob's ~/.config is a link to /root (so
    // ~/.config/Slack leads to root's Slack folder); inside Bob's work folder, an entry links there too.
    symlinkSync(join(root, "root/secret"), join(root, "home/ann/Work"));
    symlinkSync(join(root, "root"), join(root, "home/bob/.config"));
    write(root, "home/bob/Work/notes.txt", "bob's work");
    symlinkSync(join(root, "root/secret"), join(root, "home/bob/Work/secrets"));
    const outside = snapshot(join(root, "root"));
    const wipe = await requestWipe(deviceId, false);

    const run = agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(run.code, run.stderr).toBe(0);
    expect(snapshot(join(root, "root"))).toEqual(outside);
    expect(readdirSync(join(root, "home/bob/Work"))).toEqual([]);
    expect(existsSync(join(root, "home/ann/Work"))).toBe(false);

    const polled = await wipeOf(deviceId, wipe.wipe_id);
    const byPath = Object.fromEntries(
      polled.report.paths.map((entry: { path: string }) => [entry.path, entry]),
    );
    expect(byPath["/home/ann/Work"]).toMatchObject({
      outcome: "erased",
      files: 1,
      bytes: 0,
      detail: "a symbolic link: removed, its target not followed",
    });
    expect(byPath["/home/bob/.config/Slack"]).toMatchObject({
      outcome: "not_followed",
      detail: "/home/bob/.config is a symbolic link; not followed",
    });
    // Bob's note and the link (not what it pointed to) went.
    expect(byPath["/home/bob/Work"]).toMatchObject({ outcome: "erased", files: 2, bytes: 10 });
  });

  test("20 wipes while a racer swaps a work folder and a link to root's files: nothing outside is lost", async () => {
    const racerSource = join(mkdtempSync(join(tmpdir(), "bulwark-racer-")), "racer.c");
    writeFileSync(
      racerSource,
      [
        "#define _GNU_SOURCE",
        "#include <fcntl.h>",
        "#include <unistd.h>",
        "#include <sys/syscall.h>",
        "/* Swaps two names (a folder and a link) as fast as it can, until killed. */",
        "int main(int argc, char **argv) {",
        "  if (argc != 3) return 2;",
        "  for (;;) syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], 2 /* RENAME_EXCHANGE */);",
        "}",
        "",
      ].join("\n"),
    );
    const racer = racerSource.replace(/\.c$/, "");
    const compiled = Bun.spawnSync(["cc", "-O2", "-o", racer, racerSource]);
    expect(compiled.exitCode, compiled.stderr.toString()).toBe(0);

    const root = machineWithUsers();
    chmodSync(join(root, "root"), 0o700);
    const outside = snapshot(join(root, "root"));
    let raced = 0;
    for (let round = 1; round <= 20; round++) {
      const work = join(root, "home/ann/Work");
      const { stateDir, deviceId } = await enroll(root, "--work-dir", work);
      rmSync(work, { recursive: true, force: true });
      for (let index = 0; index < 200; index++) write(root, `home/ann/Work/file-${index}`, "work");
      for (let index = 0; index < 50; index++) write(root, `home/ann/Work/projects/doc-${index}`, "work");
      symlinkSync(join(root, "root/secret"), join(work, "projects-link"));
      const wipe = await requestWipe(deviceId, false);
      const swapping = Bun.spawn([racer, "projects", "projects-link"], { cwd: work });
      try {
        const run = agent(root, stateDir, "run", "--once", "--no-tunnel");
        expect(run.code, run.stderr).toBe(0);
      } finally {
        swapping.kill("SIGKILL");
        await swapping.exited;
      }
      expect(snapshot(join(root, "root"))).toEqual(outside);
      const polled = await wipeOf(deviceId, wipe.wipe_id);
      // Completed when the walk was not caught mid-swap; failed, saying so, when it was.
      if (polled.status === "failed") {
        raced += 1;
        expect(polled.error).toContain("kept changing while being erased");
      } else expect(polled.status).toBe("completed");
    }
    console.log(`${raced} of 20 wipes met the racer mid-walk and failed, saying so; none lost a file`);
  }, 240_000);
});
