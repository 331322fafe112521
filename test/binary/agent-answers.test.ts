/**
 * The agent acts only on answers that pass the agent API's own schema: a hostile or broken server (here
 * a proxy in front of a real `bulwark serve` that rewrites the check-in's answer) changes nothing on the
 * machine, and the agent says which field was wrong. The answers the attack on the agent sent: class
 * names from Object.prototype, a hosts file of 40,000 names, `localhost`, an interval of 0, no vpn_config.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines, snapshot } from "../helpers/agent-machine";
import {
  buildBinary,
  callServer,
  type RunningServer,
  runCommandAsync,
  startAgentServer,
} from "../helpers/binary";

const ADMIN = { email: "answers-admin@example.com", password: "correct-horse-battery" };

let binary: string;
let server: RunningServer;
let adminToken: string;
/** How the proxy rewrites the next check-in answers (null: passes them on). */
let rewrite: ((answer: Record<string, any>) => unknown) | null = null;
let checkIns = 0;
let proxy: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  binary = await buildBinary();
  ({ server, adminToken } = await startAgentServer(binary, "bulwark-agent-answers-", ADMIN));
  proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const upstream = await fetch(`${server.url}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body: request.method === "GET" ? undefined : await request.arrayBuffer(),
      });
      if (url.pathname !== "/api/v1/agent/checkin" || upstream.status !== 200 || rewrite === null)
        return upstream;
      checkIns += 1;
      const answer = await upstream.json();
      return Response.json(rewrite(answer));
    },
  });
}, 120_000);

afterAll(async () => {
  proxy?.stop(true);
  await server?.stop();
  removeMachines();
});

/** Runs the agent without blocking this process, which serves the proxy it talks to. */
function agent(root: string, stateDir: string, ...args: string[]) {
  return runCommandAsync(binary, ["agent", ...args, "--root", root, "--state-dir", stateDir], tmpdir());
}

async function enrolledThroughProxy() {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/hostname": "answers-laptop\n",
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
      "etc/hosts": "127.0.0.1 localhost\n",
    },
  });
  const stateDir = join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "state");
  const { token } = await callServer<{ token: string }>(
    server,
    "POST",
    "/api/v1/enrollment-tokens",
    adminToken,
    {},
  );
  rewrite = null;
  const enrolled = await agent(
    root,
    stateDir,
    "enroll",
    "--server",
    `http://127.0.0.1:${proxy.port}`,
    "--token",
    token,
  );
  expect(enrolled.code, enrolled.stderr).toBe(0);
  return { root, stateDir };
}

const HOSTILE: [string, (answer: Record<string, any>) => unknown, string][] = [
  [
    "USB classes that are Object.prototype's names",
    (answer) => {
      answer.policy.policy_data.usb.allowed_classes = ["constructor", "__proto__"];
      return answer;
    },
    'policy.policy_data.usb.allowed_classes[0]: "constructor" is not one of',
  ],
  [
    "40,000 blocked names",
    (answer) => {
      answer.policy.policy_data.network.blocked_domains = Array.from(
        { length: 40_000 },
        (_, i) => `n${i}.example.com`,
      );
      return answer;
    },
    "policy.policy_data.network.blocked_domains: 40000 items, more than 1000",
  ],
  [
    "localhost as a blocked name",
    (answer) => {
      answer.policy.policy_data.network.blocked_domains = ["localhost"];
      return answer;
    },
    'policy.policy_data.network.blocked_domains[0]: "localhost" is not of the allowed form',
  ],
  [
    "an interval of 0",
    (answer) => ({ ...answer, next_checkin_seconds: 0 }),
    "next_checkin_seconds: 0 is below 1",
  ],
  [
    "vpn_config null",
    (answer) => ({ ...answer, vpn_config: null }),
    "vpn_config: must be an object, not null",
  ],
];

describe("a check-in answer that breaks the agent API's schema", () => {
  for (const [what, change, problem] of HOSTILE)
    test(`${what}: nothing changes, and the agent names the field`, async () => {
      const { root, stateDir } = await enrolledThroughProxy();
      const before = snapshot(root);
      rewrite = change;
      const run = await agent(root, stateDir, "run", "--once", "--no-tunnel");
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain("the server's checkIn answer is not valid, so nothing was changed");
      expect(run.stderr).toContain(problem);
      expect(snapshot(root)).toEqual(before);
      const status = JSON.parse((await agent(root, stateDir, "status", "--json")).stdout);
      expect(status.last_error.message).toContain(problem);
      expect(status.policy).toBeNull();

      // The same server answering as it should: the policy is enforced.
      rewrite = null;
      const healed = await agent(root, stateDir, "run", "--once", "--no-tunnel");
      expect(healed.code, healed.stderr).toBe(0);
      expect(snapshot(root)).not.toEqual(before);
    });

  test("a wipe whose work paths name the system is refused by the agent itself: /etc stays, the wipe reports it", async () => {
    const { root, stateDir } = await enrolledThroughProxy();
    const etc = snapshot(join(root, "etc"));
    expect((await agent(root, stateDir, "run", "--once", "--no-tunnel")).code).toBe(0);
    const status = JSON.parse((await agent(root, stateDir, "status", "--json")).stdout);
    const wipe = await callServer(server, "POST", `/api/v1/devices/${status.device_id}/wipe`, adminToken, {
      reason: "test",
    });
    // The server refuses such paths in a policy; a server that lies (or a policy from before the rule) sends them anyway.
    rewrite = (answer) => {
      answer.policy.policy_data.wipe = { work_paths: ["/e?c", "/etc/ssl"] };
      return answer;
    };
    const run = await agent(root, stateDir, "run", "--once", "--no-tunnel");
    expect(run.stderr).toContain("the wipe failed");
    expect(run.stderr).toContain("/e?c: refused by the agent: must start with a folder named in full");
    rewrite = null;
    // /etc is as before enrollment (the wipe undid the enforcement): nothing of it was erased.
    expect(snapshot(join(root, "etc"))).toEqual(etc);
    const polled = await callServer(
      server,
      "GET",
      `/api/v1/devices/${status.device_id}/wipe/${wipe.wipe_id}`,
      adminToken,
    );
    expect(polled.status).toBe("failed");
    expect(polled.report.paths).toContainEqual(
      expect.objectContaining({ path: "/etc/ssl", outcome: "failed", files: 0 }),
    );
  });

  test("a policy kept from an earlier answer stays as it was while answers are invalid", async () => {
    const { root, stateDir } = await enrolledThroughProxy();
    expect((await agent(root, stateDir, "run", "--once", "--no-tunnel")).code).toBe(0);
    const enforced = snapshot(root);
    const seen = checkIns;
    rewrite = (answer) => {
      answer.policy.policy_data.usb.allowed_classes = ["constructor"];
      answer.policy.version += 1;
      return answer;
    };
    expect((await agent(root, stateDir, "run", "--once", "--no-tunnel")).code).toBe(1);
    expect(checkIns).toBe(seen + 1);
    expect(snapshot(root)).toEqual(enforced);
  });
});
