/**
 * `npm run bench:agent`: what the device agent costs on its machine, and what a fleet of agents costs
 * one server. The executable is built by the same function as `npm run build`; servers run on core 0,
 * the agent and the simulated fleet on core 1 (taskset).
 *
 * 1. Memory: `bulwark agent run --no-tunnel` (the executable, a real process), enrolled against a real
 *    `bulwark serve` on a prepared machine under a temporary ROOT, with a policy that sets every section
 *    (USB blocked with a whitelist and classes, USB storage blocked, blocked domains, the VPN), so each
 *    cycle collects the facts, checks in and runs the enforcement. VmRSS and VmHWM (/proc/PID/status)
 *    are read halfway between two check-ins.
 * 2. CPU: utime + stime (/proc/PID/stat) of the same process over many cycles, divided by the cycles
 *    (devices.offline_after_seconds = 3, so next_checkin_seconds is 1); the same for a second agent
 *    beside it at next_checkin_seconds 20 (a second server), whose code the JIT sees less often; and
 *    `agent run --once`, process start included (wall time, and CPU time from the child's resource
 *    usage). The floor beside them: bench/baseline-agent.ts, an executable that only checks in.
 * 3. A fleet: N agents simulated in this process (the agent's schedule, src/agent/run/schedule.ts, and
 *    its check-in: POST /api/v1/agent/checkin with each device's own token, the devices enrolled
 *    through the API) against one `bulwark serve`. Check-ins a second and the server's own latency
 *    (duration_ms of its request log) while steady; then the server is killed (SIGKILL) and started
 *    again on the same database, and the agents' attempts are counted per second after the restart.
 *
 * Usage: npm run bench:agent [-- --cycles 120 --slow-interval 20 --once-runs 10 --agents 1000
 *   --interval 10 --steady 60 --down 20 --after 90]. Results depend on the machine; they are printed, never asserted.
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMPTY_STATUS, type EnforcementOutcome, type RuntimeStatus } from "../src/agent/run/runtime-status";
import { backoffDelay, nextCheckInDelay } from "../src/agent/run/schedule";
import { VERSION } from "../src/version";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../test/helpers/agent-machine";
import { call, LOAD_CORE, median, pinToLoadCore, type RunningServer, startServer } from "./bench/processes";
import { buildExecutable } from "./build-executable";

const option = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1] ?? fallback) : fallback;
};
const CYCLES = option("cycles", 120);
const ONCE_RUNS = option("once-runs", 10);
const AGENTS = option("agents", 1000);
/** The fleet's next_checkin_seconds (devices.offline_after_seconds is three times this). */
const INTERVAL = option("interval", 10);
const STEADY_SECONDS = option("steady", 60);
const DOWN_SECONDS = option("down", 20);
const AFTER_SECONDS = option("after", 90);
/** A second agent's next_checkin_seconds, beside the first's 1 s. */
const SLOW_INTERVAL = option("slow-interval", 20);
/** Cycles left out of the CPU measure: the first applies the policy and reports it twice. */
const WARMUP_CYCLES = 3;

const ADMIN = { email: "bench@example.com", password: "bench-password-123" };
/** Every section set, so that each cycle plans and checks every file the agent manages. */
const POLICY_DATA = {
  usb: {
    allowed: false,
    whitelist: ["046d:c52b", "1050:0407"],
    allowed_classes: ["hid", "audio", "printer"],
    audit_only: false,
  },
  storage: {
    encryption_required: true,
    external_storage_allowed: false,
    cloud_sync_allowed: false,
    max_file_size_mb: 10,
  },
  network: {
    vpn_required: true,
    vpn_always_on: false,
    allowed_domains: [],
    blocked_domains: Array.from({ length: 100 }, (_, index) => `tracker-${index}.example.net`),
    split_tunnel: false,
  },
};
const HOSTS = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n";
/** What the real agent below reports (`agent facts --json`, and its enforcement): the fleet sends the same. */
let machineReport: { os_version?: string; facts: Record<string, boolean> } = { facts: {} };
let enforcementReport: EnforcementOutcome[] = [];
/** What the fleet reads of a check-in's answer. */
interface CheckInAnswer {
  next_checkin_seconds: number;
  policy: { version: number };
}

pinToLoadCore();
const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-agent-"));
const binary = await buildExecutable(join(folder, "bulwark"));
const baselineBinary = await buildExecutable(join(folder, "baseline-agent"), {
  entry: "scripts/bench/baseline-agent.ts",
});
process.on("exit", removeMachines);

function serverEnv(dataFolder: string, port: number, offlineAfterSeconds: number): Record<string, string> {
  return {
    HOME: dataFolder,
    BULWARK_SERVER_PORT: String(port),
    BULWARK_DATABASE_PATH: join(dataFolder, "bulwark.db"),
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_DEVICES_OFFLINE_AFTER_SECONDS: String(offlineAfterSeconds),
    BULWARK_VPN_ENDPOINT: "vpn.bench.example:51820",
    BULWARK_RATE_LIMIT_AUTHENTICATED_PER_MINUTE: "100000000",
    BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "100000000",
    BULWARK_RATE_LIMIT_ENROLLMENTS_PER_MINUTE: "100000000",
  };
}

/** Signs in, gives the default policy POLICY_DATA and returns an enrollment token of unlimited uses. */
async function prepareServer(server: RunningServer): Promise<string> {
  const { token } = (await call(server, "POST", "/api/v1/auth/login", ADMIN)).body;
  const policy = (await call(server, "GET", "/api/v1/policies/default", undefined, token)).body;
  await call(server, "PUT", `/api/v1/policies/${policy.id}`, { policy_data: POLICY_DATA }, token);
  return (await call(server, "POST", "/api/v1/enrollment-tokens", { max_uses: null }, token)).body.token;
}

const kib = (status: string, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
/** VmRSS (RssAnon: the process's own memory, plus RssFile: pages of the executable and libraries) and VmHWM. */
function memoryMib(pid: number): { rss: number; anon: number; file: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (field: string) => kib(status, field) / 1024;
  return { rss: mib("VmRSS"), anon: mib("RssAnon"), file: mib("RssFile"), hwm: mib("VmHWM") };
}
const TICKS_PER_SECOND = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
/** utime + stime of the process, in ms (proc(5): fields 14 and 15 of /proc/PID/stat). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}
const percentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
};
const fixed = (value: number, digits = 1) => value.toFixed(digits);

const rows: { measure: string; value: string; goal: string }[] = [];
function report(measure: string, value: string, goal = "") {
  rows.push({ measure, value, goal });
  console.log(`${measure.padEnd(64)} ${value} ${goal ? `(goal ${goal})` : ""}`);
}

console.log(
  `Agent benchmark, ${new Date().toISOString().slice(0, 10)}: servers on core 0, the agent and the simulated fleet on core 1\n`,
);

// --- 1 and 2: real agents ---
{
  /** A server whose next_checkin_seconds is `nextCheckIn`, with the bench policy and an enrollment token. */
  const startAgentServer = async (name: string, nextCheckIn: number) => {
    const dataFolder = join(folder, name);
    mkdirSync(dataFolder);
    const server = await startServer([binary, "serve"], {
      cwd: dataFolder,
      env: serverEnv(dataFolder, 0, nextCheckIn * 3),
    });
    return { server, enrollmentToken: await prepareServer(server) };
  };
  const fast = await startAgentServer("agent-server", 1);
  const slow = await startAgentServer("slow-agent-server", SLOW_INTERVAL);
  const agentEnv = { PATH: process.env.PATH ?? "", HOME: folder };
  /**
   * A laptop's tree (Debian on LUKS, usbguard installed) enrolled with `target` from a fresh state folder:
   * the agent's arguments and its state folder.
   */
  const enrolledMachine = (name: string, target: typeof fast) => {
    const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
      files: {
        "etc/hostname": `${name}\n`,
        "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
        "etc/hosts": HOSTS,
        "usr/sbin/usbguard-daemon": "",
      },
    });
    const stateDir = join(folder, `${name}-state`);
    const where = ["--root", root, "--state-dir", stateDir];
    const enrolled = Bun.spawnSync(
      [binary, "agent", "enroll", "--server", target.server.url, "--token", target.enrollmentToken, ...where],
      { env: agentEnv },
    );
    if (enrolled.exitCode !== 0) throw new Error(`agent enroll: ${enrolled.stderr.toString()}`);
    return { args: [...where, "--no-tunnel"], root, stateDir };
  };

  /**
   * `agent run` as a process, watched: each cycle ends by writing status.json with a new
   * last_checkin_at, which is when a cycle is counted and its CPU time read; memory is read halfway to
   * next_checkin_at, while the agent sleeps. The first `warmup` cycles are left out.
   */
  const watchedAgent = (machine: ReturnType<typeof enrolledMachine>, warmup: number) => {
    const child = Bun.spawn(["taskset", "-c", LOAD_CORE, binary, "agent", "run", ...machine.args], {
      env: agentEnv,
      stdout: "ignore",
      stderr: "pipe",
    });
    const log = new Response(child.stderr).text();
    let lastCheckIn: string | null = null;
    let cycleEndedAt = 0;
    let sampleAt: number | null = null;
    const watch = {
      child,
      cycles: 0,
      /** CPU time at the end of each cycle, by cycle number. */
      cpuAtCycle: [] as number[],
      memory: [] as ({ cycle: number } & ReturnType<typeof memoryMib>)[],
      /** CPU time and wall time from each cycle's end to the memory reading: asleep. */
      asleep: { cpuMs: 0, wallMs: 0 },
      status: EMPTY_STATUS as RuntimeStatus,
      /** CPU per cycle after the warm-up, and over how many cycles. */
      perCycle: () => {
        const measured = watch.cycles - warmup;
        const used = (watch.cpuAtCycle[watch.cycles] as number) - (watch.cpuAtCycle[warmup] as number);
        return { ms: used / measured, cycles: measured };
      },
      steadyMemory: () => watch.memory.filter((sample) => sample.cycle > warmup),
      poll: async () => {
        if (child.exitCode !== null) throw new Error(`agent run exited (${child.exitCode}): ${await log}`);
        try {
          watch.status = JSON.parse(readFileSync(join(machine.stateDir, "status.json"), "utf8"));
        } catch {
          return; // not written yet
        }
        const { last_checkin_at: last, next_checkin_at: next } = watch.status;
        if (last && last !== lastCheckIn) {
          lastCheckIn = last;
          watch.cycles++;
          watch.cpuAtCycle[watch.cycles] = cpuMs(child.pid);
          cycleEndedAt = performance.now();
          sampleAt = (Date.parse(last) + Date.parse(next ?? last)) / 2;
        }
        if (sampleAt !== null && Date.now() >= sampleAt) {
          watch.memory.push({ cycle: watch.cycles, ...memoryMib(child.pid) });
          if (watch.cycles > warmup) {
            watch.asleep.cpuMs += cpuMs(child.pid) - (watch.cpuAtCycle[watch.cycles] as number);
            watch.asleep.wallMs += performance.now() - cycleEndedAt;
          }
          sampleAt = null;
        }
      },
      log,
    };
    return watch;
  };

  const looping = enrolledMachine("loop-laptop", fast);
  const once = enrolledMachine("once-laptop", fast);
  const sleepy = enrolledMachine("slow-laptop", slow);
  const agent = watchedAgent(looping, WARMUP_CYCLES);
  // The first cycle applies the policy and reports it twice.
  const slowAgent = watchedAgent(sleepy, 1);
  // The floor beside them, checking in as the second machine (before that one's --once runs below).
  const onceToken = JSON.parse(readFileSync(join(once.stateDir, "state.json"), "utf8")).device_token;
  const baseline = Bun.spawn(["taskset", "-c", LOAD_CORE, baselineBinary, fast.server.url, onceToken, "1"], {
    env: agentEnv,
    stdout: "pipe",
    stderr: "inherit",
  });
  let baselineCheckIns = 0;
  void (async () => {
    for await (const chunk of baseline.stdout) baselineCheckIns += chunk.length;
  })();
  const baselineMemory: ReturnType<typeof memoryMib>[] = [];
  let baselineFrom = { cpuMs: 0, checkIns: 0 };
  let baselineSampled = 0;
  const started = performance.now();
  while (agent.cycles < CYCLES + WARMUP_CYCLES || slowAgent.cycles < 3) {
    await Bun.sleep(20);
    if (performance.now() - started > (CYCLES + WARMUP_CYCLES + SLOW_INTERVAL * 3) * 5000)
      throw new Error(`agent run: too few cycles; its logs:\n${await agent.log}\n${await slowAgent.log}`);
    await agent.poll();
    await slowAgent.poll();
    if (agent.cycles === WARMUP_CYCLES && baselineFrom.checkIns === 0)
      baselineFrom = { cpuMs: cpuMs(baseline.pid), checkIns: baselineCheckIns };
    // The floor's memory, read when the agent's is.
    if (agent.memory.length > baselineSampled) {
      baselineSampled = agent.memory.length;
      if (agent.cycles > WARMUP_CYCLES) baselineMemory.push(memoryMib(baseline.pid));
    }
  }
  const baselinePerCheckIn =
    (cpuMs(baseline.pid) - baselineFrom.cpuMs) / (baselineCheckIns - baselineFrom.checkIns);
  for (const child of [agent.child, slowAgent.child, baseline]) child.kill("SIGTERM");
  await Promise.all([agent.child.exited, slowAgent.child.exited, baseline.exited]);
  const { status } = agent;
  enforcementReport = status.enforcement;
  machineReport = JSON.parse(
    Bun.spawnSync([binary, "agent", "facts", "--json", "--root", looping.root], {
      env: agentEnv,
    }).stdout.toString(),
  );
  const outcomes: Record<string, number> = {};
  for (const { outcome } of status.enforcement) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  console.log(
    `-- bulwark agent run, next_checkin_seconds 1, ${agent.cycles} cycles; enforcement reported: ${Object.entries(
      outcomes,
    )
      .map(([outcome, count]) => `${count} ${outcome}`)
      .join(", ")}; last error: ${status.last_error?.message ?? "none"}`,
  );
  const steady = agent.steadyMemory();
  const last = steady[steady.length - 1];
  report(
    "agent run: resident memory between check-ins (VmRSS), median",
    `${fixed(median(steady.map((sample) => sample.rss)))} MiB`,
    "<= 64 MiB",
  );
  // Five readings from first to last, to show whether it grows from cycle to cycle.
  const trend = [0, 0.25, 0.5, 0.75, 1].map((at) => steady[Math.round(at * (steady.length - 1))]);
  report(
    `agent run: VmRSS at cycles ${trend.map((sample) => sample?.cycle).join(", ")}`,
    `${trend.map((sample) => fixed(sample?.rss ?? Number.NaN)).join(", ")} MiB`,
  );
  report(
    `agent run: of the last VmRSS, RssAnon / RssFile (the executable's pages)`,
    `${fixed(last?.anon ?? Number.NaN)} / ${fixed(last?.file ?? Number.NaN)} MiB`,
  );
  report("agent run: peak resident memory (VmHWM)", `${fixed(last?.hwm ?? Number.NaN)} MiB`);
  const floor = baselineMemory[baselineMemory.length - 1];
  report(
    "floor (bench/baseline-agent.ts, check-ins only): VmRSS median; last RssAnon / RssFile",
    `${fixed(median(baselineMemory.map((sample) => sample.rss)))} MiB; ${fixed(floor?.anon ?? Number.NaN)} / ${fixed(floor?.file ?? Number.NaN)} MiB`,
  );
  const perCycle = agent.perCycle();
  report(
    `agent run: CPU (utime+stime) per cycle, over ${perCycle.cycles} cycles`,
    `${fixed(perCycle.ms)} ms`,
    "<= 50 ms",
  );
  report("floor: CPU per check-in, over the same time", `${fixed(baselinePerCheckIn)} ms`);
  // Counted in each cycle above too (one second asleep a cycle here).
  report(
    "agent run: CPU while asleep between check-ins",
    `${fixed((agent.asleep.cpuMs / agent.asleep.wallMs) * 1000, 2)} ms per second asleep`,
  );
  // Its code runs once every SLOW_INTERVAL seconds: less of it is compiled by the JIT than at 1 s.
  const slowPerCycle = slowAgent.perCycle();
  report(
    `agent run at next_checkin_seconds ${SLOW_INTERVAL}: CPU per cycle, over ${slowPerCycle.cycles} cycles`,
    `${fixed(slowPerCycle.ms)} ms`,
    "<= 50 ms",
  );
  report(
    `agent run at next_checkin_seconds ${SLOW_INTERVAL}: VmRSS between check-ins, median`,
    `${fixed(median(slowAgent.steadyMemory().map((sample) => sample.rss)))} MiB`,
    "<= 64 MiB",
  );
  await slow.server.stop();

  // --once: a fresh process each time; the first run applies the policy and is not counted.
  const runs: { wall: number; cpu: number; maxRss: number }[] = [];
  for (let run = 0; run <= ONCE_RUNS; run++) {
    const startedAt = performance.now();
    const child = Bun.spawn(["taskset", "-c", LOAD_CORE, binary, "agent", "run", "--once", ...once.args], {
      env: agentEnv,
      stdout: "ignore",
      stderr: "pipe",
    });
    const log = await new Response(child.stderr).text();
    if ((await child.exited) !== 0) throw new Error(`agent run --once: ${log}`);
    const wall = performance.now() - startedAt;
    const usage = child.resourceUsage();
    if (run > 0 && usage)
      runs.push({ wall, cpu: Number(usage.cpuTime.total) / 1000, maxRss: usage.maxRSS / 1024 / 1024 });
  }
  report(
    `agent run --once, process start included: wall, median of ${runs.length}`,
    `${fixed(median(runs.map((run) => run.wall)))} ms`,
  );
  report("agent run --once: CPU (user+system), median", `${fixed(median(runs.map((run) => run.cpu)))} ms`);
  report("agent run --once: peak resident memory", `${fixed(median(runs.map((run) => run.maxRss)))} MiB`);
  await fast.server.stop();
}

// --- 3: a fleet of simulated agents against one server, restarted mid-run ---
{
  const dataFolder = join(folder, "fleet-server");
  mkdirSync(dataFolder);
  // A fixed port: the agents keep the server's address across the restart.
  const port = 18_190;
  /** The server's own duration of each check-in it answered, from its request log. */
  const served: { at: number; ms: number; status: number }[] = [];
  const onLine = (line: string) => {
    if (!line.includes('"/api/v1/agent/checkin"')) return;
    const entry = JSON.parse(line);
    served.push({ at: Date.parse(entry.time), ms: entry.duration_ms, status: entry.status });
  };
  const startFleetServer = () =>
    startServer([binary, "serve"], {
      cwd: dataFolder,
      env: serverEnv(dataFolder, port, INTERVAL * 3),
      onLine,
    });
  let server = await startFleetServer();
  const enrollmentToken = await prepareServer(server);
  const enrollStarted = performance.now();
  const tokens: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < AGENTS) {
        const index = next++;
        const enrolled = await call(server, "POST", "/api/v1/devices/enroll", {
          enrollment_token: enrollmentToken,
          device_name: `fleet-${index}`,
          platform: "linux",
          os_version: "debian 12",
          agent_version: VERSION,
          hardware_id: `fleet-hw-${index}`,
        });
        tokens.push(enrolled.body.device_token);
      }
    }),
  );
  console.log(
    `\n-- ${AGENTS.toLocaleString("en")} simulated agents (enrolled through the API in ${fixed((performance.now() - enrollStarted) / 1000)} s), next_checkin_seconds ${INTERVAL}`,
  );

  const attempts: { at: number; ok: boolean }[] = [];
  let isRunning = true;
  let wakeAll: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    wakeAll = resolve;
  });
  const sleep = (seconds: number) => Promise.race([Bun.sleep(seconds * 1000), stopped]);
  /** One agent's loop: check in, report a newly applied policy at once, sleep as the agent does. */
  const returnedAt: (number | null)[] = tokens.map(() => null);
  let restartedAt = Number.POSITIVE_INFINITY;
  const simulate = async (token: string, index: number) => {
    let failures = 0;
    let appliedVersion: number | null = null;
    const checkIn = async (): Promise<{ answer: CheckInAnswer } | { retryAfter: number | null }> => {
      attempts.push({ at: Date.now(), ok: false });
      const attempt = attempts[attempts.length - 1] as { at: number; ok: boolean };
      try {
        const response = await fetch(`${server.url}/api/v1/agent/checkin`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          // What the agent sends (src/agent/run/cycle.ts): the facts, then the applied policy version and
          // the last enforcement, as the real agent above reported them.
          body: JSON.stringify({
            agent_version: VERSION,
            ...machineReport,
            ...(appliedVersion !== null
              ? { policy_version: appliedVersion, enforcement: enforcementReport }
              : {}),
          }),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status !== 200)
          return { retryAfter: Number(response.headers.get("retry-after")) || null };
        attempt.ok = true;
        if (attempt.at >= restartedAt) returnedAt[index] ??= attempt.at;
        return { answer: JSON.parse(text) as CheckInAnswer };
      } catch {
        return { retryAfter: null };
      }
    };
    // Started at a random point of one interval, as a fleet in its steady state.
    await sleep(Math.random() * INTERVAL);
    while (isRunning) {
      let result = await checkIn();
      if ("answer" in result && result.answer.policy.version !== appliedVersion) {
        appliedVersion = result.answer.policy.version;
        result = await checkIn();
      }
      if ("answer" in result) {
        failures = 0;
        await sleep(nextCheckInDelay(result.answer.next_checkin_seconds));
      } else {
        failures++;
        await sleep(backoffDelay(failures, result.retryAfter));
      }
    }
  };
  const fleetStarted = Date.now();
  const loops = tokens.map(simulate);
  await Bun.sleep(STEADY_SECONDS * 1000);
  const killedAt = Date.now();
  await server.stop("SIGKILL");
  await Bun.sleep(DOWN_SECONDS * 1000);
  server = await startFleetServer();
  restartedAt = Date.now();
  await Bun.sleep(AFTER_SECONDS * 1000);
  isRunning = false;
  wakeAll();
  await Promise.all(loops);
  await server.stop();

  // Steady: from one interval after the start (every agent has checked in) to the kill.
  const steadyFrom = fleetStarted + INTERVAL * 1000;
  const steadySeconds = (killedAt - steadyFrom) / 1000;
  const steadyServed = served.filter((entry) => entry.at >= steadyFrom && entry.at < killedAt);
  const steadyOk = steadyServed.filter((entry) => entry.status === 200);
  const durations = steadyOk.map((entry) => entry.ms);
  report(
    `fleet: check-ins/s sustained (${fixed(steadySeconds, 0)} s, ${AGENTS} agents every ${INTERVAL} s ±10%)`,
    `${fixed(steadyOk.length / steadySeconds)}/s (${steadyServed.length - steadyOk.length} not 200)`,
  );
  report(
    "fleet: server latency of a check-in (its log's duration_ms), p50 / p99",
    `${fixed(percentile(durations, 0.5), 2)} / ${fixed(percentile(durations, 0.99), 2)} ms`,
  );
  /** How many of `times` fall in each second from `from`, for `seconds` seconds. */
  const perSecond = (times: number[], from: number, seconds: number) => {
    const counts = Array.from({ length: seconds }, () => 0);
    for (const at of times) {
      const second = Math.floor((at - from) / 1000);
      if (second >= 0 && second < seconds) counts[second] = (counts[second] as number) + 1;
    }
    return counts;
  };
  const attemptTimes = attempts.map((attempt) => attempt.at);
  const steadyCounts = perSecond(attemptTimes, steadyFrom, Math.floor(steadySeconds));
  const returned = returnedAt.filter((at): at is number => at !== null);
  const lastReturn = Math.max(...returned);
  const recoverySeconds = Math.max(1, Math.ceil((lastReturn - restartedAt) / 1000));
  const afterCounts = perSecond(attemptTimes, restartedAt, recoverySeconds);
  const returnCounts = perSecond(returned, restartedAt, recoverySeconds);
  const downAttempts = attempts.filter((attempt) => attempt.at >= killedAt && attempt.at < restartedAt);
  console.log(
    `server killed (SIGKILL) ${fixed((killedAt - fleetStarted) / 1000, 0)} s into the run, started again ${fixed((restartedAt - killedAt) / 1000)} s later on the same database; ${downAttempts.length} attempts failed meanwhile`,
  );
  const histogram = (title: string, counts: number[]) => {
    console.log(`${title} (10 a line):`);
    for (let second = 0; second < counts.length; second += 10)
      console.log(
        `  +${String(second).padStart(3)} s: ${counts
          .slice(second, second + 10)
          .map((count) => String(count).padStart(4))
          .join("")}`,
      );
  };
  histogram("check-in attempts per second after the restart", afterCounts);
  histogram("agents back (their first check-in answered 200) per second after the restart", returnCounts);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  report(
    `fleet: agents back after the restart; the last one after`,
    `${returned.length} of ${AGENTS}; ${recoverySeconds} s`,
  );
  report(
    "fleet: agents back a second after the restart, max / mean (until the last)",
    `${Math.max(...returnCounts)} / ${fixed(mean(returnCounts))}`,
  );
  report(
    "fleet: attempts a second after the restart, max / mean (until the last was back)",
    `${Math.max(...afterCounts)} / ${fixed(mean(afterCounts))}`,
  );
  report(
    "fleet: attempts a second while steady, max / mean",
    `${Math.max(...steadyCounts)} / ${fixed(mean(steadyCounts))}`,
  );
  const afterServed = served
    .filter((entry) => entry.at >= restartedAt && entry.at <= lastReturn && entry.status === 200)
    .map((entry) => entry.ms);
  report(
    "fleet: server latency of a check-in after the restart, p50 / p99",
    `${fixed(percentile(afterServed, 0.5), 2)} / ${fixed(percentile(afterServed, 0.99), 2)} ms`,
  );
}

console.log("\n| measure | measured | goal |\n|---|---|---|");
for (const row of rows) console.log(`| ${row.measure} | ${row.value} | ${row.goal} |`);
