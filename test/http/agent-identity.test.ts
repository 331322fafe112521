/** The agent's own identity: leaving the server, rotating its token, fetching the executable. */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { executablePath } from "../helpers/binary";
import { checkIn, createDeviceTestApp, enrollDevice, recordedEvents } from "../helpers/devices";
import { inProcessTest, TEST_TARGET } from "../helpers/test-app";

const t = await createDeviceTestApp();
afterAll(() => t.close());

const DEVICE = "/api/v1/agent/device";
const TOKEN = "/api/v1/agent/token";

describe("DELETE /agent/device (unenroll)", () => {
  test("the device leaves: its token stops working, its hardware enrolls again, and it is audited", async () => {
    const org = await t.createOrganization();
    const hardwareId = `HW-${crypto.randomUUID()}`;
    const enrolled = await enrollDevice(t, org.adminToken, { hardware_id: hardwareId });
    const left = await t.request("DELETE", DEVICE, { token: enrolled.device_token });
    expect(left.status).toBe(204);
    const after = await checkIn(t, enrolled.device_token);
    expect([after.status, after.body.reason]).toEqual([401, "device_token_invalid"]);
    expect((await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).status).toBe(
      404,
    );
    const audit = await t.request("GET", "/api/v1/audit-logs?action=device.unenroll", {
      token: org.adminToken,
    });
    expect(audit.body.data[0]).toMatchObject({
      action: "device.unenroll",
      actor: { type: "device", id: enrolled.id },
      target: { type: "device", id: enrolled.id },
      details: {
        hardware_id: hardwareId,
        previous_status: "online",
        device_tokens_revoked: 1,
        released_vpn_ip: enrolled.vpn_config.address.split("/")[0],
      },
    });
    const again = await enrollDevice(t, org.adminToken, { hardware_id: hardwareId });
    expect(again.id).not.toBe(enrolled.id);
  });

  inProcessTest("emits device.unenrolled", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    expect((await t.request("DELETE", DEVICE, { token: enrolled.device_token })).status).toBe(204);
    const [event] = await recordedEvents(t, org.organizationId, "device.unenrolled");
    expect(event?.data).toEqual({
      device_id: enrolled.id,
      device_name: enrolled.device_name,
      platform: "macos",
      previous_status: "online",
    });
  });

  test("409 while a wipe waits for the device or while it is suspended; 401 without a device token", async () => {
    const org = await t.createOrganization();
    const wiping = await enrollDevice(t, org.adminToken);
    await t.request("POST", `/api/v1/devices/${wiping.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    const pending = await t.request("DELETE", DEVICE, { token: wiping.device_token });
    expect([pending.status, pending.body.reason]).toEqual([409, "wipe_pending"]);
    const held = await enrollDevice(t, org.adminToken);
    await t.request("PUT", `/api/v1/devices/${held.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "investigation" },
    });
    const suspended = await t.request("DELETE", DEVICE, { token: held.device_token });
    expect([suspended.status, suspended.body.reason]).toEqual([409, "device_suspended"]);
    expect((await t.request("DELETE", DEVICE, { token: org.adminToken })).status).toBe(401);
    // Both are still there.
    for (const device of [wiping, held])
      expect((await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken })).status).toBe(
        200,
      );
  });
});

describe("POST /agent/token (rotation)", () => {
  test("answers a new token that works; the old one keeps working for now; the rotation is audited", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const rotated = await t.request("POST", TOKEN, { token: enrolled.device_token });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    expect(rotated.body.device_token).toMatch(/^bwd_/);
    expect(rotated.body.device_token).not.toBe(enrolled.device_token);
    expect(Date.parse(rotated.body.device_token_expires_at)).toBeGreaterThan(Date.now() + 300 * 86400_000);
    expect(Date.parse(rotated.body.previous_tokens_expire_at)).toBeLessThanOrEqual(Date.now() + 301_000);
    expect((await checkIn(t, rotated.body.device_token)).status).toBe(200);
    expect((await checkIn(t, enrolled.device_token)).status).toBe(200);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=device.token_rotate", {
      token: org.adminToken,
    });
    expect(audit.body.data[0]).toMatchObject({
      actor: { type: "device", id: enrolled.id },
      target: { type: "device", id: enrolled.id },
      details: { credential: "token", previous_tokens: 1 },
    });
  });

  inProcessTest("the old token stops working five minutes later; the new one goes on", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const rotated = await t.request("POST", TOKEN, { token: enrolled.device_token });
    t.clock.advanceSeconds(299);
    expect((await checkIn(t, enrolled.device_token)).status).toBe(200);
    t.clock.advanceSeconds(2);
    const old = await checkIn(t, enrolled.device_token);
    expect([old.status, old.body.reason]).toEqual([401, "device_token_expired"]);
    expect((await checkIn(t, rotated.body.device_token)).status).toBe(200);
  });

  inProcessTest(
    "a rotation retried with the old token after a lost answer leaves one token in the end",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const lost = await t.request("POST", TOKEN, { token: enrolled.device_token });
      const retried = await t.request("POST", TOKEN, { token: enrolled.device_token });
      expect(retried.status).toBe(200);
      t.clock.advanceSeconds(301);
      expect((await checkIn(t, retried.body.device_token)).status).toBe(200);
      for (const token of [enrolled.device_token, lost.body.device_token])
        expect((await checkIn(t, token)).status).toBe(401);
    },
  );
});

describe("GET /agent/download", () => {
  if (TEST_TARGET !== "in-process") {
    test("serves the running executable, byte for byte, with its SHA-256 beside it", async () => {
      const response = await t.fetch("/api/v1/agent/download", { method: "GET" });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/octet-stream");
      expect(response.headers.get("content-disposition")).toBe('attachment; filename="bulwark"');
      expect(response.headers.get("x-bulwark-version")).toMatch(/^\d+\.\d+\.\d+/);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const executable = new Uint8Array(await Bun.file(await executablePath()).arrayBuffer());
      expect(bytes.length).toBe(executable.length);
      expect(Buffer.compare(bytes, executable)).toBe(0);
      const digest = createHash("sha256").update(executable).digest("hex");
      expect(response.headers.get("x-bulwark-sha256")).toBe(digest);
      const sidecar = await t.fetch("/api/v1/agent/download.sha256", { method: "GET" });
      expect(await sidecar.text()).toBe(`${digest}  bulwark\n`);
    });
  } else {
    test("from source, the download is a 404 that says how to build the executable", async () => {
      for (const path of ["/api/v1/agent/download", "/api/v1/agent/download.sha256"]) {
        const response = await t.request("GET", path);
        expect([path, response.status, response.body.reason]).toEqual([
          path,
          404,
          "agent_download_unavailable",
        ]);
        expect(response.body.details).toContain("npm run build");
      }
    });

    test("from source, the Windows agent is a 404 that says which file a built server offers", async () => {
      for (const path of ["/api/v1/agent/download", "/api/v1/agent/download.sha256"]) {
        const response = await t.request("GET", `${path}?os=windows&arch=x64`);
        expect([path, response.status, response.body.reason]).toEqual([
          path,
          404,
          "agent_download_unavailable",
        ]);
        expect(response.body.details).toContain("npm run build");
        expect(response.body.details).toContain("dist/bulwark-windows-x64.exe");
      }
    });

    test("from source, each macOS agent is a 404 that says which file a built server offers", async () => {
      for (const path of ["/api/v1/agent/download", "/api/v1/agent/download.sha256"])
        for (const arch of ["arm64", "x64"]) {
          const response = await t.request("GET", `${path}?os=macos&arch=${arch}`);
          expect([path, arch, response.status, response.body.reason]).toEqual([
            path,
            arch,
            404,
            "agent_download_unavailable",
          ]);
          expect(response.body.details).toContain(`dist/bulwark-darwin-${arch}`);
        }
    });
  }

  test("another os or arch is a 400 naming the parameter, in the JSON error body", async () => {
    for (const path of ["/api/v1/agent/download", "/api/v1/agent/download.sha256"]) {
      for (const [query, field] of [
        ["os=darwin", "os"],
        ["os=Windows", "os"],
        ["os=windows&arch=arm64", "arch"],
        ["arch=arm64", "arch"],
        ["arch=x86_64", "arch"],
        ["os=macos", "arch"],
        ["os=macos&arch=aarch64", "arch"],
      ] as const) {
        const response = await t.request("GET", `${path}?${query}`);
        expect([path, query, response.status, response.body.code, response.body.reason]).toEqual([
          path,
          query,
          400,
          400,
          "validation_failed",
        ]);
        expect(response.headers.get("content-type")).toContain("application/json");
        expect(response.body.details).toStartWith(`${field}`);
      }
    }
  });
});
