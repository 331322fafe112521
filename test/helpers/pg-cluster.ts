/**
 * A throwaway PostgreSQL cluster for a test run: `initdb` into a temporary folder, memory-backed when
 * there is room (as the `postgres` user when running as root, since PostgreSQL refuses to run as root),
 * listening on 127.0.0.1 on a free port with trust authentication on loopback, and made fast at the cost
 * of durability (`fsync`, `synchronous_commit` and `full_page_writes` off: a crash loses the cluster,
 * which is thrown away anyway) unless started `durable` (the benchmark). Each caller gets its own database from `createDatabase()`;
 * `createPasswordRole()` adds a role that must give its password. The cluster is stopped (`pg_ctl stop
 * -m immediate`) and its folder deleted when the process exits, however it ends: by an exit hook, and
 * for a process killed outright by a watchdog that waits for this process to be gone.
 */
import { spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { ensurePostgresql } from "../../scripts/test-tools";

export interface PgCluster {
  /** The cluster's `postgres` database, as the superuser `postgres`. */
  url: string;
  port: number;
  /** The temporary folder: the data directory (`data/`), its log and its Unix socket. */
  folder: string;
  /** The postmaster's process id (a new one after `startAgain`). */
  pid: number;
  /** Creates a new, empty database (owned by `owner`, else by `postgres`) and returns its URL as `postgres`. */
  createDatabase(owner?: string): Promise<string>;
  /**
   * Creates a role that may sign in and must give its password (SCRAM) over TCP: a rule for it goes
   * ahead of the cluster's trust rule for loopback, and the configuration is reloaded.
   */
  createPasswordRole(role: string, password: string): Promise<void>;
  /**
   * Shuts the server down and keeps its folder, as an operator's `pg_ctl stop` does (`fast`: open
   * sessions are ended; `immediate`: the postmaster and its processes quit at once, as in a crash).
   * Waits for the postmaster to exit.
   */
  shutDown(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts the server again on the same folder and port after `shutDown`. */
  startAgain(): Promise<void>;
  /** Stops the cluster at once (no checkpoint) and deletes its folder. Waits for the postmaster to exit. */
  stop(): void;
}

let shared: Promise<PgCluster> | undefined;

/** One cluster for the whole test process, started by the first caller. */
export function sharedPgCluster(): Promise<PgCluster> {
  shared ??= startPgCluster();
  return shared;
}

export interface PgClusterOptions {
  /**
   * Durable, as a production server is: `fsync`, `synchronous_commit` and `full_page_writes` on (their
   * defaults), for a benchmark. Tests leave them off.
   */
  durable?: boolean;
  /** The CPUs the server's processes run on (taskset -c), e.g. "0" for a benchmark's server core. */
  cpus?: string;
  /** More lines for postgresql.conf (`name = value`). */
  settings?: string[];
}

/** Starts a new cluster (a few seconds: `initdb` then `pg_ctl start`). */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = ensurePostgresql();
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user Debian's package creates.
  const owner = asRoot ? postgresUser() : null;
  const as = (command: string[]) => (owner ? ["runuser", "-u", "postgres", "--", ...command] : command);

  const folder = mkdtempSync(join(clusterParent(), "bulwark-pg-"));
  const data = join(folder, "data");
  if (owner) chownSync(folder, owner.uid, owner.gid);
  let stopped = false;
  const removeFolder = () => rmSync(folder, { recursive: true, force: true });
  try {
    await run(
      as([
        join(bin, "initdb"),
        "--pgdata",
        data,
        "--username",
        "postgres",
        "--auth",
        "trust",
        "--encoding",
        "UTF8",
        "--locale",
        "C",
        "--no-sync",
      ]),
    );
    const writeConfig = (name: string, text: string) => {
      writeFileSync(join(data, name), text);
      if (owner) chownSync(join(data, name), owner.uid, owner.gid);
    };
    writeConfig(
      "pg_hba.conf",
      "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n",
    );
    // The postmaster and every backend it forks inherit pg_ctl's CPUs.
    const pin = options.cpus ? ["taskset", "-c", options.cpus] : [];
    const pgCtlStart = [
      ...pin,
      ...as([join(bin, "pg_ctl"), "start", "--wait", "--pgdata", data, "--log", join(folder, "log")]),
    ];
    // A free port is only free until someone else takes it: a start that loses that race tries another.
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      writeConfig(
        "postgresql.auto.conf",
        [
          "listen_addresses = '127.0.0.1'",
          `port = ${port}`,
          `unix_socket_directories = '${folder}'`,
          ...(options.durable
            ? ["fsync = on", "synchronous_commit = on", "full_page_writes = on"]
            : [
                "fsync = off",
                "synchronous_commit = off",
                "full_page_writes = off",
                // Every database created from a template is written to the WAL once: recycle it early.
                "max_wal_size = '64MB'",
                "min_wal_size = '32MB'",
              ]),
          ...(options.settings ?? []),
          "",
        ].join("\n"),
      );
      const started = await run(pgCtlStart, { check: false });
      if (started.exitCode === 0) break;
      if (attempt === 3) throw new Error(`pg_ctl start failed:\n${started.output}${readLog(folder)}`);
    }
    const postmasterPid = async () =>
      Number((await Bun.file(join(data, "postmaster.pid")).text()).split("\n")[0]);
    const pid = await postmasterPid();
    startWatchdog(as([join(bin, "pg_ctl"), "stop", "--mode", "immediate", "--pgdata", data]), folder);

    // The watchdog ends by itself once the folder is gone.
    const stop = () => {
      if (stopped) return;
      stopped = true;
      process.off("exit", stop);
      const pgCtl = Bun.spawnSync(
        as([join(bin, "pg_ctl"), "stop", "--mode", "immediate", "--wait", "--pgdata", data]),
      );
      // pg_ctl finds the postmaster through the data folder; should that fail, its signal for the same stop.
      if (pgCtl.exitCode !== 0) signal(cluster.pid, "SIGQUIT");
      removeFolder();
    };
    process.on("exit", stop);

    const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
    /** Runs `statements` one after another as the superuser, on the `postgres` database. */
    const asSuperuser = async (...statements: string[]) => {
      const admin = new SQL(url("postgres"), { max: 1 });
      try {
        for (const statement of statements) await admin.unsafe(statement);
      } finally {
        await admin.close();
      }
    };
    let databases = 0;
    const cluster: PgCluster = {
      url: url("postgres"),
      port,
      folder,
      pid,
      async createDatabase(owner) {
        const name = `t${++databases}`;
        await asSuperuser(`CREATE DATABASE ${name}${owner ? ` OWNER ${owner}` : ""}`);
        return url(name);
      },
      async createPasswordRole(role, password) {
        await asSuperuser(`CREATE ROLE ${role} LOGIN PASSWORD '${password.replaceAll("'", "''")}'`);
        const hba = join(data, "pg_hba.conf");
        writeConfig(
          "pg_hba.conf",
          `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`,
        );
        await asSuperuser("SELECT pg_reload_conf()");
      },
      stop,
      async shutDown(mode = "fast") {
        await run(as([join(bin, "pg_ctl"), "stop", "--mode", mode, "--wait", "--pgdata", data]));
      },
      async startAgain() {
        await run(pgCtlStart);
        cluster.pid = await postmasterPid();
      },
    };
    return cluster;
  } catch (error) {
    if (!stopped) removeFolder();
    throw error;
  }
}

/** Memory-backed storage can hold this many bytes of databases and WAL for the cluster to go there. */
const MEMORY_NEEDED = 1024 ** 3;

/**
 * Where clusters go: in memory-backed storage (/dev/shm) when it has room, where creating a database
 * (a copy of its template, written through the WAL) takes a tenth of the time it takes on a busy disk;
 * else the temporary folder.
 */
function clusterParent(): string {
  const memory = "/dev/shm";
  if (!existsSync(memory)) return tmpdir();
  const { bavail, bsize } = statfsSync(memory);
  return bavail * bsize >= MEMORY_NEEDED ? memory : tmpdir();
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Bun.spawnSync(["id", flag, "postgres"]);
  const uid = id("-u");
  const gid = id("-g");
  if (uid.exitCode !== 0 || gid.exitCode !== 0)
    throw new Error(
      "running as root, and there is no `postgres` user to run PostgreSQL as (apt-get install postgresql)",
    );
  return { uid: Number(uid.stdout.toString()), gid: Number(gid.stdout.toString()) };
}

/** A port nobody listens on at this instant, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

async function run(command: string[], options: { check?: boolean } = {}) {
  const child = Bun.spawn(command, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  const output = stdout + stderr;
  if (exitCode !== 0 && options.check !== false)
    throw new Error(`${command.join(" ")} exited with ${exitCode}:\n${output}`);
  return { exitCode, output };
}

function readLog(folder: string): string {
  const log = join(folder, "log");
  return existsSync(log) ? Bun.spawnSync(["tail", "-n", "20", log]).stdout.toString() : "";
}

/**
 * A process in its own session (so that a Ctrl-C to this one's group spares it) that polls once a second
 * for this process and the folder and, once this process is gone without having stopped the cluster
 * (SIGKILL, a crash), stops it and deletes the folder; it ends by itself when the folder is gone.
 * `setsid --fork` starts it as a grandchild: `bun test` kills the processes a test started that are still
 * running when the test times out, and a timeout in the test that first asked for the cluster would
 * otherwise take the watchdog with it.
 */
function startWatchdog(stopCommand: string[], folder: string): void {
  const script =
    'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done; shift; folder="$1"; shift; if [ -d "$folder" ]; then "$@"; rm -rf "$folder"; fi';
  const starter = spawn(
    "setsid",
    ["--fork", "sh", "-c", script, "sh", String(process.pid), folder, ...stopCommand],
    { detached: true, stdio: "ignore" },
  );
  starter.unref();
}
