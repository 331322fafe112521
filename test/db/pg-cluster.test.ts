/**
 * The throwaway PostgreSQL cluster the PostgreSQL tests run on (test/helpers/pg-cluster.ts): each
 * database it creates is apart from the others, and stopping it leaves no PostgreSQL process and no folder,
 * also when the test that started it ran out of time, and when its process is then killed outright.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { startPgCluster } from "../helpers/pg-cluster";

/** The process ids whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses.
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

const isPostgres = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]?.includes("postgres") ?? false;
  } catch {
    return false;
  }
};

test(
  "each created database is its own, and stop leaves no postgres process and no folder",
  async () => {
    const cluster = await startPgCluster();
    try {
      const [first, second] = [await cluster.createDatabase(), await cluster.createDatabase()];
      expect(first).not.toBe(second);
      const a = new SQL(first, { max: 1 });
      const b = new SQL(second, { max: 1 });
      try {
        const [nameA] = await a`SELECT current_database() AS name`;
        const [nameB] = await b`SELECT current_database() AS name`;
        expect(nameA.name).not.toBe(nameB.name);

        // The same table name in both, with different rows: each sees only its own.
        await a`CREATE TABLE things (name text PRIMARY KEY)`;
        await a`INSERT INTO things VALUES ('only in a')`;
        const [beforeB] = await b`SELECT to_regclass('things') AS found`;
        expect(beforeB.found).toBeNull();
        await b`CREATE TABLE things (name text PRIMARY KEY)`;
        await b`INSERT INTO things VALUES ('only in b')`;
        expect(await a`SELECT name FROM things`).toEqual([{ name: "only in a" }]);
        expect(await b`SELECT name FROM things`).toEqual([{ name: "only in b" }]);
      } finally {
        await a.close();
        await b.close();
      }

      // The postmaster and its server processes (checkpointer, WAL writer, ...) are running now.
      const processes = [cluster.pid, ...childrenOf(cluster.pid)];
      expect(processes.filter(isPostgres).length).toBeGreaterThan(1);
      expect(existsSync(cluster.folder)).toBe(true);

      cluster.stop();
      expect(processes.filter(isPostgres)).toEqual([]);
      expect(existsSync(cluster.folder)).toBe(false);
      // Nothing answers on its port any more.
      const late = new SQL(cluster.url, { max: 1, connectionTimeout: 2 });
      await expect(late`SELECT 1`).rejects.toThrow();
      await late.close();
    } finally {
      cluster.stop();
    }
  },
  { timeout: 60_000 },
);

/** Whether a process is running (not gone, nor a zombie left for a parent to collect). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Runs test/fixtures/pg-cluster-timeout.fixture.ts, whose first test starts the shared cluster and runs
 * out of time; with `kill`, SIGKILLs the process once it waits in its second test. Answers the cluster's
 * postmaster and folder, and whether they are gone within 15 s of the process's end.
 */
async function clusterOfTimedOutTest(kill: boolean) {
  const child = Bun.spawn([process.execPath, "test", "./test/fixtures/pg-cluster-timeout.fixture.ts"], {
    cwd: join(import.meta.dir, "../.."),
    env: { ...process.env, KILL_ME: kill ? "1" : "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
    output += decoder.decode(chunk, { stream: true });
    if (kill && output.includes("waiting to be killed")) child.kill("SIGKILL");
  }
  await child.exited;
  const [, pid, folder] = /cluster (\d+) (\S+)/.exec(output) ?? [];
  if (!pid || !folder) throw new Error(`the fixture did not start its cluster:\n${output}`);
  const deadline = Date.now() + 15_000;
  while ((isRunning(Number(pid)) || existsSync(folder)) && Date.now() < deadline) await Bun.sleep(100);
  return { postmasterRuns: isRunning(Number(pid)), folderExists: existsSync(folder) };
}

test("a test that runs out of time after starting the cluster: the cluster still goes when the process ends, or is killed", async () => {
  const [exited, killed] = await Promise.all([clusterOfTimedOutTest(false), clusterOfTimedOutTest(true)]);
  expect(exited).toEqual({ postmasterRuns: false, folderExists: false });
  expect(killed).toEqual({ postmasterRuns: false, folderExists: false });
}, 90_000);
