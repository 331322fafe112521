import { expect, test } from "bun:test";
import { callServer as call, serversOnOneFolder } from "../helpers/binary";

const ADMIN = { email: "crash@example.com", password: "crash-test-password-1" };
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_DATABASE_SYNCHRONOUS: "full",
  BULWARK_RATE_LIMIT_AUTHENTICATED_PER_MINUTE: "1000000",
  BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "1000000",
};
const DEVICES = 24;

const servers = serversOnOneFolder("bulwark-checkin-crash-", ENV);

test("killed with SIGKILL under check-in load (group commit, synchronous=full), every acknowledged check-in is there after a restart", async () => {
  const first = await servers.start();
  const { token } = await call<{ token: string }>(first, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const { token: enrollmentToken } = await call<{ token: string }>(
    first,
    "POST",
    "/api/v1/enrollment-tokens",
    token,
    { max_uses: null },
  );
  const devices: { id: string; device_token: string }[] = [];
  for (let index = 0; index < DEVICES; index++) {
    devices.push(
      await call(first, "POST", "/api/v1/devices/enroll", undefined, {
        enrollment_token: enrollmentToken,
        device_name: `crash-${index}`,
        platform: "linux",
        agent_version: "1.0.0",
        hardware_id: `crash-hw-${index}`,
      }),
    );
  }

  // Each device checks in again as soon as it is answered, reporting a counter as its agent version.
  // `acknowledged` holds the last counter the server answered 200 for.
  const acknowledged = new Map<string, number>();
  let isKilled = false;
  const agents = devices.map(async (device) => {
    for (let counter = 1; !isKilled; counter++) {
      try {
        const response = await fetch(`${first.url}/api/v1/agent/checkin`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${device.device_token}` },
          body: JSON.stringify({ agent_version: `2.0.${counter}`, facts: { disk_encrypted: true } }),
        });
        if (response.status !== 200) throw new Error(`check-in answered ${response.status}`);
        await response.json();
        if (!isKilled) acknowledged.set(device.id, counter);
      } catch (error) {
        if (isKilled) return;
        throw error;
      }
    }
  });
  // Let the load run until a few hundred check-ins are acknowledged, then kill the process mid-write.
  const deadline = Date.now() + 20_000;
  while ([...acknowledged.values()].reduce((sum, value) => sum + value, 0) < 600 && Date.now() < deadline)
    await Bun.sleep(20);
  const killedAt = new Map(acknowledged);
  isKilled = true;
  await first.stop("SIGKILL");
  await Promise.all(agents);
  expect([...killedAt.values()].reduce((sum, value) => sum + value, 0)).toBeGreaterThanOrEqual(600);

  const second = await servers.start();
  // Port 0: the restarted server listens elsewhere, and tokens name their issuer's address.
  const { token: again } = await call<{ token: string }>(
    second,
    "POST",
    "/api/v1/auth/login",
    undefined,
    ADMIN,
  );
  for (const device of devices) {
    const stored = await call<{ agent_version: string }>(
      second,
      "GET",
      `/api/v1/devices/${device.id}`,
      again,
    );
    const storedCounter = Number(stored.agent_version.split(".")[2] ?? 0);
    const last = killedAt.get(device.id) ?? 0;
    // What was acknowledged is there; the one check-in in flight when the process died may be too.
    expect(storedCounter, device.id).toBeGreaterThanOrEqual(last);
    expect(storedCounter, device.id).toBeLessThanOrEqual(last + 1);
  }
  await second.stop();
}, 90_000);
