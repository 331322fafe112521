/**
 * The Windows agent: `npm run build` makes dist/bulwark-windows-x64.exe, the same application built by
 * the same function for Windows x64, and the server offers it from beside its own executable at
 * `GET /api/v1/agent/download?os=windows&arch=x64` (saved as bulwark.exe). Here it is checked as a file
 * (an x86-64 PE executable that carries the whole application; the agent suites run it under Wine) and
 * served by a copy of the executable in a folder of its own, so the test decides what sits beside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executablePath, type RunningServer, startServer, windowsExecutablePath } from "../helpers/binary";

/** IMAGE_FILE_MACHINE_AMD64, the COFF header's machine of an x86-64 executable. */
const MACHINE_X86_64 = 0x8664;

test("npm run build makes a Windows x86-64 executable of the same application", async () => {
  const bytes = readFileSync(await windowsExecutablePath());
  // The DOS header's "MZ", whose e_lfanew (at 0x3c) points at the PE signature and the COFF header.
  expect(bytes.subarray(0, 2).toString("latin1")).toBe("MZ");
  const pe = bytes.readUInt32LE(0x3c);
  expect(bytes.subarray(pe, pe + 4).toString("latin1")).toBe("PE\0\0");
  expect(bytes.readUInt16LE(pe + 4)).toBe(MACHINE_X86_64);
  // The application inside: its migrations, its metrics and its example configuration.
  for (const embedded of [
    "0005_gdpr_anonymous_label",
    "bulwark_http_requests_total",
    "# Bulwark configuration.",
  ])
    expect({ embedded, found: bytes.includes(embedded) }).toEqual({ embedded, found: true });
}, 180_000);

describe("the Windows agent, served from beside the executable", () => {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-windows-download-"));
  const beside = join(folder, "bulwark-windows-x64.exe");
  let server: RunningServer;
  const get = (path: string) => fetch(`${server.url}/api/v1/agent/${path}`);

  beforeAll(async () => {
    // A copy, so that only what this test puts there sits beside it.
    copyFileSync(await executablePath(), join(folder, "bulwark"));
    server = await startServer(join(folder, "bulwark"), folder);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  test("absent: 404 agent_download_unavailable, naming the file and the folder to put it in", async () => {
    for (const path of ["download?os=windows&arch=x64", "download.sha256?os=windows"]) {
      const response = await get(path);
      const body = (await response.json()) as { reason: string; details: string };
      expect([path, response.status, body.reason]).toEqual([path, 404, "agent_download_unavailable"]);
      expect(body.details).toContain(`put bulwark-windows-x64.exe in ${folder}`);
      expect(body.details).toContain("npm run build");
    }
    // The Linux agent is still the running executable.
    expect((await get("download.sha256")).status).toBe(200);
  });

  test("present: its bytes as bulwark.exe, with its SHA-256 in the header and the checksum line", async () => {
    copyFileSync(await windowsExecutablePath(), beside);
    const windows = readFileSync(beside);
    const digest = new Bun.CryptoHasher("sha256").update(windows).digest("hex");
    const response = await get("download?os=windows&arch=x64");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="bulwark.exe"');
    expect(response.headers.get("x-bulwark-sha256")).toBe(digest);
    const served = new Uint8Array(await response.arrayBuffer());
    expect(served.length).toBe(windows.length);
    expect(Buffer.compare(served, windows)).toBe(0);
    const line = await get("download.sha256?os=windows&arch=x64");
    expect([line.status, await line.text()]).toEqual([200, `${digest}  bulwark.exe\n`]);
    // The Linux agent is not confused with it: the running executable, under its own name.
    const linux = await get("download.sha256");
    const linuxDigest = new Bun.CryptoHasher("sha256")
      .update(readFileSync(join(folder, "bulwark")))
      .digest("hex");
    expect(await linux.text()).toBe(`${linuxDigest}  bulwark\n`);
  }, 60_000);

  test("replaced: the new file's digest, not the one computed before", async () => {
    writeFileSync(beside, "MZ: a newer build\n");
    const digest = new Bun.CryptoHasher("sha256").update("MZ: a newer build\n").digest("hex");
    const line = await get("download.sha256?os=windows");
    expect(await line.text()).toBe(`${digest}  bulwark.exe\n`);
    const response = await get("download?os=windows");
    expect([response.headers.get("x-bulwark-sha256"), await response.text()]).toEqual([
      digest,
      "MZ: a newer build\n",
    ]);
  });
});
