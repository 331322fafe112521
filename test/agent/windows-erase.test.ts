/**
 * The Windows wipe's eraser, run here on Linux (it uses only Node's fs): it erases exactly the policy's
 * work paths (`~/` in each person's profile, `/A/B` on the system drive, --work-dir folders), reports
 * each path as the Linux eraser does, refuses the system's folders without regard to case, and never
 * follows a link. What Linux cannot make (a folder swapped at a given moment, a folder whose real path is
 * elsewhere though lstat calls it a folder, as with a volume's junction on Windows) is played through
 * `realpathSync.native`, which the eraser asks; a mounted file system is a real one, in a mount
 * namespace. The profiles come from `reg query ... ProfileList /s` outputs (test/fixtures/windows/
 * profiles). The executable built for Windows erases under Wine in test/binary/agent-windows.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ProgramRunner } from "../../src/agent/facts/fact";
import type { ErasedPath } from "../../src/agent/run/erase-work-profile";
import { eraseWindowsTargets, windowsWorkTargets } from "../../src/agent/windows/erase";
import {
  expandVariables,
  PROFILE_LIST_KEY,
  type ProfileList,
  parseProfileList,
  readWindowsProfiles,
} from "../../src/agent/windows/profiles";
import { snapshot } from "../helpers/agent-machine";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "windows", "profiles");
const ERASER = join(import.meta.dir, "..", "..", "src", "agent", "windows", "erase.ts");
const machines: string[] = [];

afterAll(() => {
  for (const machine of machines) rmSync(machine, { recursive: true, force: true });
});

/**
 * A machine: its system drive (a folder here), Ann's and Bob's profiles on it, and a folder outside
 * every work path holding files a wipe must never touch (another user's, the system's).
 */
function machine() {
  const base = mkdtempSync(join(tmpdir(), "bulwark-windows-erase-"));
  machines.push(base);
  const drive = join(base, "C");
  const ann = join(drive, "Users", "ann");
  const bob = join(drive, "Users", "bob");
  const outside = join(base, "outside");
  mkdirSync(ann, { recursive: true });
  mkdirSync(bob, { recursive: true });
  write(outside, "secret/credentials", "not yours");
  write(outside, "secret/deeper/key", "not yours either");
  write(outside, "Slack/token", "someone else's");
  write(outside, "private/plan.txt", "elsewhere");
  const profiles: ProfileList = {
    profiles: [
      { sid: "S-1-5-21-1-2-3-1001", folder: ann },
      { sid: "S-1-5-21-1-2-3-1002", folder: bob },
    ],
    problems: [],
  };
  return { drive, ann, bob, outside, profiles, env: { SystemDrive: drive } };
}

function write(folder: string, path: string, content: string) {
  mkdirSync(dirname(join(folder, path)), { recursive: true });
  writeFileSync(join(folder, path), content);
}

function byPath(paths: ErasedPath[]): Record<string, ErasedPath> {
  return Object.fromEntries(paths.map((entry) => [entry.path, entry]));
}

describe("the work paths are erased, and only they", () => {
  test("each profile's ~/ paths and the system drive's /A/B are emptied; the report says what went", () => {
    const { drive, ann, bob, outside, profiles, env } = machine();
    write(ann, "Work/plan.txt", "12345");
    write(ann, "Work/q3/budget.txt", "1234567");
    write(ann, ".config/Slack/cookies", "c");
    write(ann, "Documents/personal.txt", "mine");
    write(drive, "Data/projects/apollo/private/p.txt", "abc");
    write(drive, "Data/projects/apollo/public/readme", "keep");
    mkdirSync(join(drive, "Data/projects/gemini"), { recursive: true });
    const before = snapshot(outside);

    const report = eraseWindowsTargets(
      windowsWorkTargets(["~/Work", "~/.config/Slack", "/Data/projects/*/private"], [], profiles, env),
    );

    expect(readdirSync(join(ann, "Work"))).toEqual([]);
    expect(readdirSync(join(ann, ".config/Slack"))).toEqual([]);
    expect(readdirSync(join(drive, "Data/projects/apollo/private"))).toEqual([]);
    expect(readFileSync(join(ann, "Documents/personal.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(drive, "Data/projects/apollo/public/readme"), "utf8")).toBe("keep");
    expect(snapshot(outside)).toEqual(before);
    const paths = byPath(report.paths);
    expect(paths[join(ann, "Work")]).toMatchObject({ outcome: "erased", files: 2, bytes: 12, folders: 1 });
    expect(paths[join(ann, ".config/Slack")]).toMatchObject({ outcome: "erased", files: 1, bytes: 1 });
    expect(paths[join(bob, "Work")]).toMatchObject({ outcome: "absent", files: 0 });
    expect(paths[join(bob, ".config/Slack")]).toMatchObject({ outcome: "absent" });
    expect(paths[join(drive, "Data/projects/apollo/private")]).toMatchObject({
      outcome: "erased",
      files: 1,
      bytes: 3,
    });
    expect(paths[join(drive, "Data/projects/gemini/private")]).toMatchObject({ outcome: "absent" });
    expect(report.paths).toHaveLength(6);
    // The totals are the paths' sums; nothing failed.
    expect(report).toMatchObject({ files: 4, bytes: 16, failures: [] });
  });

  test("a work path that is a file is deleted; a --work-dir is the machine's own path", () => {
    const { ann, bob, profiles, env } = machine();
    write(ann, "notes.txt", "123456");
    write(bob, "Scratch/a/b.txt", "12");
    const report = eraseWindowsTargets(
      windowsWorkTargets(["~/notes.txt"], [join(bob, "Scratch")], profiles, env),
    );
    expect(existsSync(join(ann, "notes.txt"))).toBe(false);
    expect(readdirSync(join(bob, "Scratch"))).toEqual([]);
    const paths = byPath(report.paths);
    expect(paths[join(ann, "notes.txt")]).toMatchObject({
      outcome: "erased",
      files: 1,
      bytes: 6,
      folders: 0,
    });
    expect(paths[join(bob, "notes.txt")]).toMatchObject({ outcome: "absent" });
    expect(paths[join(bob, "Scratch")]).toMatchObject({ outcome: "erased", files: 1, bytes: 2, folders: 1 });
    expect(report).toMatchObject({ files: 2, bytes: 8, failures: [] });
  });

  test("a profile folder the registry names but that is gone fails its path; a path that names nothing is absent", () => {
    const { drive, ann, profiles, env } = machine();
    rmSync(ann, { recursive: true });
    const report = eraseWindowsTargets(windowsWorkTargets(["~/Work", "/Data/none/x"], [], profiles, env));
    const paths = byPath(report.paths);
    // reg prints in the console's code page: a profile named outside it must not read as "nothing to erase".
    const gone = `the profile folder ${ann} that the registry's ProfileList names cannot be found: its work is not erased`;
    expect(paths[join(ann, "Work")]).toEqual({
      path: join(ann, "Work"),
      outcome: "failed",
      files: 0,
      bytes: 0,
      folders: 0,
      detail: gone,
    });
    expect(paths[join(drive, "Data/none/x")]).toMatchObject({
      outcome: "absent",
      detail: `${join(drive, "Data")} does not exist`,
    });
    expect(report).toMatchObject({ files: 0, bytes: 0, failures: [`${join(ann, "Work")}: ${gone}`] });
  });
});

describe("a link is never followed", () => {
  test("a work folder that is a link, a link on the way, a link inside: the files outside stay", () => {
    const { ann, bob, outside, profiles, env } = machine();
    symlinkSync(join(outside, "secret"), join(ann, "Work"));
    symlinkSync(outside, join(bob, ".config"));
    write(bob, "Work/notes.txt", "bob's work");
    symlinkSync(join(outside, "secret"), join(bob, "Work/secrets"));
    const before = snapshot(outside);

    const report = eraseWindowsTargets(windowsWorkTargets(["~/Work", "~/.config/Slack"], [], profiles, env));

    expect(snapshot(outside)).toEqual(before);
    expect(existsSync(join(ann, "Work"))).toBe(false);
    expect(readdirSync(join(bob, "Work"))).toEqual([]);
    const paths = byPath(report.paths);
    expect(paths[join(ann, "Work")]).toMatchObject({
      outcome: "erased",
      files: 1,
      bytes: 0,
      detail: "a symbolic link or junction: removed, its target not followed",
    });
    expect(paths[join(bob, ".config/Slack")]).toMatchObject({
      outcome: "not_followed",
      detail: `${join(bob, ".config")} is a symbolic link or junction; not followed`,
    });
    // Bob's note and the link (not what it led to) went.
    expect(paths[join(bob, "Work")]).toMatchObject({ outcome: "erased", files: 2, bytes: 10, folders: 0 });
    expect(report.failures).toEqual([]);
  });

  test("a glob's match that is a link is not walked through", () => {
    const { drive, outside, profiles, env } = machine();
    write(drive, "Data/projects/apollo/private/p.txt", "abc");
    symlinkSync(outside, join(drive, "Data/projects/evil"));
    const before = snapshot(outside);
    const report = eraseWindowsTargets(windowsWorkTargets(["/Data/projects/*/private"], [], profiles, env));
    expect(snapshot(outside)).toEqual(before);
    expect(readFileSync(join(outside, "private/plan.txt"), "utf8")).toBe("elsewhere");
    expect(report.paths).toContainEqual({
      path: join(drive, "Data/projects/*/private"),
      outcome: "not_followed",
      files: 0,
      bytes: 0,
      folders: 0,
      detail: `${join(drive, "Data/projects/evil")} is a symbolic link or junction; not followed`,
    });
    expect(byPath(report.paths)[join(drive, "Data/projects/apollo/private")]).toMatchObject({
      outcome: "erased",
      files: 1,
    });
  });
});

/**
 * Runs `body` with `realpathSync.native` (which the eraser asks where a folder really is) answered by
 * `answer` first: what Windows does underneath, or a racer at that very moment, played here on cue.
 */
function whileRealPathsAre(answer: (path: string, real: string) => string, body: () => void) {
  const realpath = realpathSync as unknown as { native: (path: string) => string };
  const native = realpath.native;
  realpath.native = (path) => answer(path, native(path));
  try {
    body();
  } finally {
    realpath.native = native;
  }
}

describe("a swap or another volume on the way is not followed", () => {
  test("a folder swapped for a link between its listing and its entries' removal: the target stops, failed", () => {
    const { ann, outside, profiles, env } = machine();
    const projects = join(ann, "Work/projects");
    for (const name of ["doc-1", "doc-2", "sub/inner.txt"]) {
      write(projects, name, "work");
      write(outside, `secret/${name}`, "not yours");
    }
    const before = snapshot(outside);
    let swapped = false;
    whileRealPathsAre(
      (path, real) => {
        // As the walk makes sure of projects/sub, projects becomes a link to the secret folder (which has
        // a sub of its own): sub's listing then goes through the link, and its entries would be the secret's.
        if (path === join(projects, "sub") && !swapped) {
          renameSync(projects, join(ann, "Work/projects-real"));
          symlinkSync(join(outside, "secret"), projects);
          swapped = true;
        }
        return real;
      },
      () => {
        const report = eraseWindowsTargets(windowsWorkTargets(["~/Work"], [], profiles, env));
        const changed = `${projects} changed while being erased (swapped for a link or junction?); stopped, nothing followed`;
        expect(byPath(report.paths)[join(ann, "Work")]).toMatchObject({
          outcome: "failed",
          detail: `${join(ann, "Work")}: ${changed}`,
        });
        expect(report.failures).toEqual([`${join(ann, "Work")}: ${changed}`]);
      },
    );
    expect(swapped).toBe(true);
    expect(snapshot(outside)).toEqual(before);
  });

  test("a folder whose real path is elsewhere (a volume's junction, to Windows' lstat a folder) is left", () => {
    const { drive, ann, profiles, env } = machine();
    write(ann, "Work/plan.txt", "12345");
    write(ann, "Work/volume/kept.txt", "on the volume");
    write(drive, "Data/vol/x/kept.txt", "on the volume");
    write(ann, "Mounted/kept.txt", "on the volume");
    const elsewhere = new Set([join(ann, "Work/volume"), join(drive, "Data/vol"), join(ann, "Mounted")]);
    whileRealPathsAre(
      (path, real) => (elsewhere.has(path) ? "/the/volume" : real),
      () => {
        const report = eraseWindowsTargets(
          windowsWorkTargets(["~/Work", "/Data/vol/x", "~/Mounted"], [], profiles, env),
        );
        const paths = byPath(report.paths);
        expect(paths[join(ann, "Work")]).toMatchObject({
          outcome: "erased",
          files: 1,
          bytes: 5,
          detail: `left alone: ${join(ann, "Work/volume")} (leads elsewhere: a mounted volume or another reparse point)`,
        });
        expect(paths[join(drive, "Data/vol/x")]).toMatchObject({
          outcome: "not_followed",
          detail: `${join(drive, "Data/vol")} leads elsewhere (a mounted volume or another reparse point); not followed`,
        });
        expect(paths[join(ann, "Mounted")]).toMatchObject({
          outcome: "not_followed",
          detail: `${join(ann, "Mounted")} leads elsewhere (a mounted volume or another reparse point); not followed`,
        });
        expect(report.failures).toEqual([]);
      },
    );
    expect(readFileSync(join(ann, "Work/volume/kept.txt"), "utf8")).toBe("on the volume");
    expect(readFileSync(join(drive, "Data/vol/x/kept.txt"), "utf8")).toBe("on the volume");
    expect(readFileSync(join(ann, "Mounted/kept.txt"), "utf8")).toBe("on the volume");
  });

  test("a file system mounted in a work folder (another dev) is left as it is", () => {
    const { ann } = machine();
    const work = join(ann, "Work");
    const volume = join(work, "volume");
    write(work, "plan.txt", "12345");
    mkdirSync(volume);
    const script = join(ann, "erase.ts");
    writeFileSync(
      script,
      [
        `import { readdirSync } from "node:fs";`,
        `import { eraseWindowsTargets, windowsWorkTargets } from ${JSON.stringify(ERASER)};`,
        `const [work, volume] = process.argv.slice(2);`,
        `const report = eraseWindowsTargets(windowsWorkTargets([], [work], { profiles: [], problems: [] }, {}));`,
        `console.log(JSON.stringify({ report, onVolume: readdirSync(volume) }));`,
      ].join("\n"),
    );
    // A tmpfs mounted on the volume folder, in a mount namespace of the eraser's own.
    const run = Bun.spawnSync([
      "unshare",
      "-m",
      "--propagation",
      "private",
      "sh",
      "-c",
      'mount -t tmpfs none "$3" && echo kept > "$3/kept.txt" && exec "$0" "$1" "$2" "$3"',
      process.execPath,
      script,
      work,
      volume,
    ]);
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    const { report, onVolume } = JSON.parse(run.stdout.toString());
    expect(onVolume).toEqual(["kept.txt"]);
    expect(report.paths).toEqual([
      {
        path: work,
        outcome: "erased",
        files: 1,
        bytes: 5,
        folders: 0,
        detail: `left alone: ${volume} (another volume)`,
      },
    ]);
  });
});

describe("system paths are refused, without regard to case", () => {
  test("the system drive's own folders, in any case, and names Windows would read as others", () => {
    const { drive, ann, profiles, env } = machine();
    write(drive, "windows/x/system.dll", "system");
    write(drive, "Program Files/x/app.exe", "app");
    write(ann, "Work/plan.txt", "12345");
    const before = snapshot(drive);
    const refused = [
      "/windows/x",
      "/PROGRAM FILES/x",
      "/Users/ann/Work",
      "/programdata/Vendor",
      "/$Recycle.Bin/x",
      "/Windows./x",
      "/PROGRA~1/x",
      "~/Work:hidden",
      "~/nul",
      "/etc/x",
    ];
    const targets = windowsWorkTargets(refused, [], profiles, env);
    expect(targets.map((target) => target.refused !== undefined)).toEqual(refused.map(() => true));

    const report = eraseWindowsTargets(targets);

    expect(snapshot(drive)).toEqual(before);
    const paths = byPath(report.paths);
    expect(paths["/windows/x"]).toEqual({
      path: "/windows/x",
      outcome: "failed",
      files: 0,
      bytes: 0,
      folders: 0,
      detail: "refused by the agent: must not be in /windows: a wipe erases work data, never the system",
    });
    expect(paths["/PROGRAM FILES/x"]?.detail).toBe(
      "refused by the agent: must not be in /PROGRAM FILES: a wipe erases work data, never the system",
    );
    expect(paths["/Windows./x"]?.detail).toContain("must not end a component with a dot or a space");
    expect(paths["/PROGRA~1/x"]?.detail).toContain("not by a short name");
    expect(paths["~/Work:hidden"]?.detail).toContain("must not contain :");
    expect(paths["~/nul"]?.detail).toContain("must not name a device");
    expect(paths["/etc/x"]?.detail).toContain("must not be in /etc");
    expect(report.failures).toHaveLength(refused.length);
    expect(report.files).toBe(0);
  });

  test("folders of those names below the top are work folders like any other", () => {
    const { drive, profiles, env } = machine();
    write(drive, "Data/Windows/build.log", "1234");
    write(drive, "Data/Users/list.txt", "12");
    const report = eraseWindowsTargets(
      windowsWorkTargets(["/Data/Windows", "/Data/Users"], [], profiles, env),
    );
    expect(report).toMatchObject({ files: 2, bytes: 6, failures: [] });
    expect(readdirSync(join(drive, "Data/Windows"))).toEqual([]);
  });
});

describe("globs match one component at a time, without regard to case", () => {
  test("*, ? and [...] in a profile's paths and on the system drive", () => {
    const { drive, ann, profiles, env } = machine();
    write(ann, "Projects/Work/a.txt", "1");
    write(ann, "Projects/wiki/b.txt", "22");
    write(ann, "Projects/Documents/c.txt", "keep");
    write(drive, "Data/alpha/out/1", "1");
    write(drive, "Data/Beta/out/2", "22");
    write(drive, "Data/delta/out/3", "keep");
    write(drive, "Data/ab/out/4", "4444");
    write(drive, "Data/abc/out/5", "55555");

    const report = eraseWindowsTargets(
      windowsWorkTargets(["~/Projects/w*", "/Data/[a-c]*/out", "/Data/a?/out"], [], profiles, env),
    );

    expect(readdirSync(join(ann, "Projects/Work"))).toEqual([]);
    expect(readdirSync(join(ann, "Projects/wiki"))).toEqual([]);
    expect(readFileSync(join(ann, "Projects/Documents/c.txt"), "utf8")).toBe("keep");
    expect(readFileSync(join(drive, "Data/delta/out/3"), "utf8")).toBe("keep");
    expect(readdirSync(join(drive, "Data/alpha/out"))).toEqual([]);
    expect(readdirSync(join(drive, "Data/Beta/out"))).toEqual([]);
    const erased = report.paths.filter((entry) => entry.outcome === "erased").map((entry) => entry.path);
    expect(erased.sort()).toEqual(
      [
        join(ann, "Projects/Work"),
        join(ann, "Projects/wiki"),
        join(drive, "Data/alpha/out"),
        join(drive, "Data/Beta/out"),
        join(drive, "Data/ab/out"),
        join(drive, "Data/abc/out"),
        join(drive, "Data/ab/out"),
      ].sort(),
    );
    // /Data/[a-c]*/out matched alpha, Beta, ab and abc (not delta); /Data/a?/out ab only, emptied by then.
    expect(existsSync(join(drive, "Data/abc/out/5"))).toBe(false);
    expect(report).toMatchObject({ files: 6, bytes: 1 + 2 + 1 + 2 + 4 + 5 });
    expect(report.failures).toEqual([]);
    // A range backwards passes the policy's rules but matches nothing: said, and the others still go.
    const backwards = eraseWindowsTargets(windowsWorkTargets(["/Data/[z-a]/out"], [], profiles, env));
    expect(backwards.paths).toEqual([
      {
        path: join(drive, "Data/[z-a]/out"),
        outcome: "failed",
        files: 0,
        bytes: 0,
        folders: 0,
        detail: "[z-a] is not a pattern the agent can read",
      },
    ]);
    expect(readFileSync(join(drive, "Data/delta/out/3"), "utf8")).toBe("keep");
  });
});

describe("the profiles, from reg query ... ProfileList /s", () => {
  const windows11 = readFileSync(join(FIXTURES, "windows-11.txt"), "utf8");
  const wine = readFileSync(join(FIXTURES, "wine-8.txt"), "utf8");

  test("Windows 11: people's accounts (local, domain, Entra ID, a profile set aside), folders expanded", () => {
    expect(parseProfileList(windows11, { SystemDrive: "C:", SystemRoot: "C:\\WINDOWS" })).toEqual({
      profiles: [
        { sid: "S-1-5-21-2914376513-3146727280-1722846127-1001", folder: "C:\\Users\\ann" },
        { sid: "S-1-5-21-2914376513-3146727280-1722846127-1002", folder: "C:\\Users\\bob" },
        { sid: "S-1-5-21-2914376513-3146727280-1722846127-1003", folder: "C:\\Users\\TEMP" },
        { sid: "S-1-5-21-2914376513-3146727280-1722846127-1003", folder: "C:\\Users\\frank" },
        { sid: "S-1-5-21-1004336348-1177238915-682003330-1105", folder: "C:\\Users\\dave.CORP" },
        { sid: "S-1-12-1-3458187652-1203458317-2631530400-2740213583", folder: "C:\\Users\\EvaMartin" },
      ],
      problems: [],
    });
  });

  test("Wine 8: its one user, a REG_SZ folder; CRLF or LF line ends alike", () => {
    const expected = { profiles: [{ sid: "S-1-5-21-0-0-0-1000", folder: "C:\\users\\root" }], problems: [] };
    expect(parseProfileList(wine, { SystemDrive: "C:" })).toEqual(expected);
    expect(parseProfileList(wine.replaceAll("\n", "\r\n"), {})).toEqual(expected);
  });

  test("a folder naming a variable that is not set is a problem, not a guess", () => {
    const list = parseProfileList(windows11, { SYSTEMROOT: "C:\\WINDOWS" });
    expect(list.profiles.map((profile) => profile.folder)).not.toContain("C:\\Users\\bob");
    expect(list.problems).toEqual([
      "S-1-5-21-2914376513-3146727280-1722846127-1002: its profile folder %SystemDrive%\\Users\\bob names %SystemDrive%, which is not set",
    ]);
    expect(expandVariables("%systemroot%\\System32", { SystemRoot: "C:\\Windows" })).toEqual({
      text: "C:\\Windows\\System32",
      unset: [],
    });
  });

  test("read through reg export's UTF-16 file: a name outside any code page comes through whole", async () => {
    // reg query's output to a pipe is in the console's code page: C:\Users\Jürgen would come garbled.
    const exported =
      (fixture: string): ProgramRunner =>
      async (argv) => {
        writeFileSync(argv[3] as string, readFileSync(join(FIXTURES, fixture)));
        return { code: 0, stdout: "The operation completed successfully.\r\n", stderr: "" };
      };
    expect(await readWindowsProfiles(exported("windows-11-export.reg"), { SystemDrive: "C:" })).toEqual({
      profiles: [
        { sid: "S-1-5-21-3623811015-3361044348-30300820-1001", folder: "C:\\Users\\Jürgen Müller" },
        { sid: "S-1-12-1-2450093431-1278123141-2914396049-1371932361", folder: "C:\\Users\\José" },
      ],
      problems: [],
    });
    // Recorded from Wine 8.0's reg export: its one user, with a REG_SZ folder.
    expect(await readWindowsProfiles(exported("wine-8.reg"), {})).toEqual({
      profiles: [{ sid: "S-1-5-21-0-0-0-1000", folder: "C:\\users\\root" }],
      problems: [],
    });
  });

  test("read through the runner; when reg fails, each ~/ path fails with why, and the others are erased", async () => {
    const asked: string[][] = [];
    const recorded: ProgramRunner = async (argv) => {
      asked.push(argv);
      writeFileSync(argv[3] as string, readFileSync(join(FIXTURES, "wine-8.reg")));
      return { code: 0, stdout: "", stderr: "" };
    };
    expect((await readWindowsProfiles(recorded, { SystemDrive: "C:" })).profiles).toHaveLength(1);
    expect(asked).toEqual([["reg", "export", PROFILE_LIST_KEY, expect.stringMatching(/export\.reg$/), "/y"]]);

    const failing: ProgramRunner = async () => ({
      code: 1,
      stdout: "",
      stderr: "ERROR: Access is denied.\r\n",
    });
    const list = await readWindowsProfiles(failing, {});
    const why = `the profile list could not be read: reg export ${PROFILE_LIST_KEY} failed (exit 1): ERROR: Access is denied.`;
    expect(list).toEqual({ profiles: [], problems: [why] });
    const { drive, env } = machine();
    write(drive, "Data/work/a", "1");
    const report = eraseWindowsTargets(windowsWorkTargets(["~/Work", "/Data/work"], [], list, env));
    expect(report.paths).toEqual([
      { path: "~/Work", outcome: "failed", files: 0, bytes: 0, folders: 0, detail: why },
      { path: join(drive, "Data/work"), outcome: "erased", files: 1, bytes: 1, folders: 0 },
    ]);
    expect(report.failures).toEqual([`~/Work: ${why}`]);
  });
});

test("the targets: ~/X per profile, /A/B at the system drive's root, --work-dir at its own root", () => {
  const profiles: ProfileList = {
    profiles: [{ sid: "S-1-5-21-1-2-3-1001", folder: "/p/ann" }],
    problems: [],
  };
  const targets = windowsWorkTargets(["~/Work/*", "/Data/x"], ["/srv/work/../scratch"], profiles, {
    systemdrive: "C:",
  });
  expect(targets).toEqual([
    {
      label: "/p/ann/Work/*",
      anchor: "/p/ann",
      anchorLabel: "/p/ann",
      parts: ["Work", "*"],
      anchorMustExist: true,
    },
    { label: join("C:\\", "Data", "x"), anchor: "C:\\", anchorLabel: "C:\\", parts: ["Data", "x"] },
    { label: "/srv/work/../scratch", anchor: "/", anchorLabel: "/", parts: ["srv", "scratch"] },
  ]);
  expect(windowsWorkTargets(["/Data/x"], [], profiles, {})).toEqual([
    {
      label: "/Data/x",
      anchor: "",
      anchorLabel: "",
      parts: [],
      failure: "the system drive is unknown (SystemDrive is not set)",
    },
  ]);
});
