/**
 * The throwaway PostgreSQL cluster the PostgreSQL tests run on (test/helpers/pg-cluster.ts): each
 * database it creates is apart from the others, and stopping it leaves no PostgreSQL process and no folder.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
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
