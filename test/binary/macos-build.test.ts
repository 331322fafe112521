/**
 * The macOS agents: `npm run build` makes dist/bulwark-darwin-arm64 and dist/bulwark-darwin-x64, the
 * same application built by the same function for Apple silicon and Intel Macs, and the server offers
 * them from beside its own executable at `GET /api/v1/agent/download?os=macos&arch=arm64|x64` (saved as
 * bulwark). No Mac runs here, so each file is checked with tools nobody here wrote: llvm-objdump reads
 * its Mach-O headers, and a short Python script (hashlib and struct only, written apart from
 * scripts/macho-codesign.ts) recomputes every page hash of its code signature, as the macOS kernel does
 * before it lets the file run. Bun leaves the x64 build with the runtime's signature of other bytes;
 * buildExecutable signs it again, and this is what holds it to that.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildExecutable } from "../../scripts/build-executable";
import { VERSION } from "../../src/version";
import { executablePath, type RunningServer, startServer } from "../helpers/binary";

const BUILDS = [
  { target: "darwin-arm64", file: "bulwark-darwin-arm64", cpu: "ARM64", query: "os=macos&arch=arm64" },
  { target: "darwin-x64", file: "bulwark-darwin-x64", cpu: "X86_64", query: "os=macos&arch=x64" },
] as const;
type Build = (typeof BUILDS)[number];

const built = new Map<Build["target"], Promise<string>>();

/**
 * A macOS executable under test: the one beside the executable under test when it is not older than it
 * (both made by one `npm run build`), else one built once per run by the same function, for the target.
 */
function macosExecutablePath(build: Build): Promise<string> {
  let path = built.get(build.target);
  if (!path) {
    path = (async () => {
      const linux = await executablePath();
      const beside = join(dirname(linux), build.file);
      if (existsSync(beside) && statSync(beside).mtimeMs >= statSync(linux).mtimeMs) return beside;
      const folder = mkdtempSync(join(tmpdir(), "bulwark-macos-"));
      return buildExecutable(join(folder, build.file), { target: build.target });
    })();
    built.set(build.target, path);
  }
  return path;
}

/**
 * Checks a thin 64-bit Mach-O's embedded code signature as the kernel would: LC_CODE_SIGNATURE's
 * SuperBlob ends __LINKEDIT and the file; each CodeDirectory covers the file up to the signature, and
 * every page's hash (the last page only up to codeLimit) and every special slot's hash matches. Prints
 * one JSON object; exits 1 when anything is wrong.
 */
const CHECK_SIGNATURE = `
import hashlib, json, struct, sys
data = open(sys.argv[1], "rb").read()
problems, directories = [], []
magic, cputype, _, _, ncmds, _, _, _ = struct.unpack_from("<IiiIIIII", data, 0)
assert magic == 0xFEEDFACF, "not a thin 64-bit Mach-O"
signature, linkedit_end, at = None, None, 32
for _ in range(ncmds):
    cmd, size = struct.unpack_from("<II", data, at)
    if cmd == 0x19 and data[at + 8:at + 24].rstrip(b"\\0") == b"__LINKEDIT":
        fileoff, filesize = struct.unpack_from("<QQ", data, at + 40)
        linkedit_end = fileoff + filesize
    if cmd == 0x1D:
        signature = struct.unpack_from("<II", data, at + 8)
    at += size
if signature is None:
    problems.append("no LC_CODE_SIGNATURE")
else:
    dataoff, datasize = signature
    if dataoff + datasize != len(data): problems.append("the signature does not end the file")
    if linkedit_end != len(data): problems.append("__LINKEDIT does not end the file")
    sb_magic, sb_length, count = struct.unpack_from(">III", data, dataoff)
    if sb_magic != 0xFADE0CC0: problems.append("no embedded-signature SuperBlob")
    blobs = {}
    for i in range(count):
        kind, offset = struct.unpack_from(">II", data, dataoff + 12 + 8 * i)
        length = struct.unpack_from(">I", data, dataoff + offset + 4)[0]
        blobs[kind] = data[dataoff + offset:dataoff + offset + length]
    algorithms = {1: ("sha1", 20), 2: ("sha256", 32), 3: ("sha256", 20), 4: ("sha384", 48)}
    for kind, blob in blobs.items():
        if not (kind == 0 or 0x1000 <= kind < 0x1005): continue
        (cd_magic, _, version, flags, hash_offset, ident_offset, n_special, n_code, code_limit,
         hash_size, hash_type, _, page_shift) = struct.unpack_from(">IIIIIIIIIBBBB", blob, 0)
        algorithm, size = algorithms[hash_type]
        page = 1 << page_shift
        slot = lambda n: blob[hash_offset + n * hash_size:hash_offset + (n + 1) * hash_size]
        digest = lambda b: hashlib.new(algorithm, b).digest()[:size]
        mismatched = [n for n in range(n_code) if digest(data[n * page:min((n + 1) * page, code_limit)]) != slot(n)]
        special = [n for n in range(1, n_special + 1)
                   if (digest(blobs[n]) if n in blobs else bytes(size)) != slot(-n)]
        identifier = blob[ident_offset:blob.index(b"\\0", ident_offset)].decode()
        directories.append({"slot": kind, "version": version, "flags": flags, "identifier": identifier,
                            "hash_type": hash_type, "page_size": page, "code_limit": code_limit,
                            "code_slots": n_code, "mismatched_pages": mismatched[:20],
                            "mismatched_count": len(mismatched), "mismatched_special_slots": special})
        if code_limit != dataoff: problems.append(f"codeLimit {code_limit} is not the signature offset {dataoff}")
        if n_code != -(-code_limit // page): problems.append(f"{n_code} code slots for {-(-code_limit // page)} pages")
        if mismatched: problems.append(f"{len(mismatched)} of {n_code} page hashes do not match")
        if special: problems.append(f"special slots {special} do not match")
    if not directories: problems.append("no CodeDirectory")
print(json.dumps({"cputype": cputype, "problems": problems, "directories": directories}))
sys.exit(1 if problems else 0)
`;

interface SignatureCheck {
  exitCode: number;
  cputype: number;
  problems: string[];
  directories: {
    version: number;
    flags: number;
    identifier: string;
    hash_type: number;
    page_size: number;
    code_limit: number;
    code_slots: number;
    mismatched_pages: number[];
    mismatched_count: number;
  }[];
}

function checkSignature(path: string): SignatureCheck {
  const run = Bun.spawnSync(["python3", "-c", CHECK_SIGNATURE, path]);
  const stderr = run.stderr.toString();
  if (stderr !== "") throw new Error(`the signature check failed to run: ${stderr}`);
  return { exitCode: run.exitCode, ...JSON.parse(run.stdout.toString()) };
}

/** llvm-objdump's reading of the Mach-O header and load commands. */
function privateHeaders(path: string): string {
  const run = Bun.spawnSync(["llvm-objdump", "--macho", "--private-headers", path]);
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
  return run.stdout.toString();
}

/** The fields of each load command named `name` in llvm-objdump's output, as numbers and words. */
function loadCommands(headers: string, name: string): Record<string, string>[] {
  return headers
    .split(/^Load command \d+$/m)
    .filter((block) => new RegExp(`^\\s*cmd ${name}$`, "m").test(block))
    .map((block) =>
      Object.fromEntries(
        block
          .trim()
          .split("\n")
          .map((line) => line.trim().split(/\s+/))
          .map(([key, ...value]) => [key ?? "", value.join(" ")]),
      ),
    );
}

for (const build of BUILDS) {
  describe(`${build.file}`, () => {
    test(`is a macOS ${build.cpu} executable of the same application, with LC_MAIN and a code signature that ends the file`, async () => {
      const path = await macosExecutablePath(build);
      const headers = privateHeaders(path);
      // MH_MAGIC_64, its CPU type, an executable (not a library).
      const header = headers.split("\n").find((line) => line.startsWith("MH_MAGIC_64"));
      expect(header?.split(/\s+/).slice(0, 2)).toEqual(["MH_MAGIC_64", build.cpu]);
      expect(header?.split(/\s+/)).toContain("EXECUTE");
      expect(loadCommands(headers, "LC_MAIN")).toHaveLength(1);
      const [buildVersion] = loadCommands(headers, "LC_BUILD_VERSION");
      expect(buildVersion?.platform).toBe("macos");
      // Bun's segment holding the application, and __LINKEDIT after it.
      const segments = loadCommands(headers, "LC_SEGMENT_64").map((segment) => segment.segname);
      expect(segments).toContain("__BUN");
      expect(segments.at(-1)).toBe("__LINKEDIT");
      const [signature, ...more] = loadCommands(headers, "LC_CODE_SIGNATURE");
      expect(more).toEqual([]);
      expect(Number(signature?.dataoff) + Number(signature?.datasize)).toBe(statSync(path).size);
      // The application inside: the agent's commands, its migrations, its version.
      const bytes = readFileSync(path);
      for (const embedded of [
        "agent enroll",
        "install-service",
        "0005_gdpr_anonymous_label",
        "bulwark_http_requests_total",
        `name:"bulwark",version:"${VERSION}"`,
      ])
        expect({ embedded, found: bytes.includes(embedded) }).toEqual({ embedded, found: true });
    }, 180_000);

    test("every page hash of its code signature matches the file (an ad-hoc SHA-256 signature of it all)", async () => {
      const check = checkSignature(await macosExecutablePath(build));
      expect(check.problems).toEqual([]);
      expect(check.exitCode).toBe(0);
      expect(check.cputype).toBe(build.cpu === "ARM64" ? 0x0100000c : 0x01000007);
      const [directory, ...alternates] = check.directories;
      expect(alternates).toEqual([]);
      // CS_ADHOC (0x2) with CS_LINKER_SIGNED, no hardened runtime (0x10000): the JIT needs no entitlement.
      expect(directory?.flags).toBe(0x20002);
      expect([directory?.hash_type, directory?.page_size]).toEqual([2, 4096]);
      expect(directory?.code_slots).toBe(Math.ceil((directory?.code_limit ?? 0) / 4096));
      expect(directory?.mismatched_count).toBe(0);
    }, 180_000);
  });
}

test("the signature check finds a page changed after signing (here one byte of the application in __BUN)", async () => {
  const path = await macosExecutablePath(BUILDS[1]);
  const folder = mkdtempSync(join(tmpdir(), "bulwark-macos-tampered-"));
  try {
    const bytes = readFileSync(path);
    const at = bytes.indexOf("0005_gdpr_anonymous_label");
    expect(at).toBeGreaterThan(0);
    bytes[at] = "1".charCodeAt(0);
    writeFileSync(join(folder, "bulwark"), bytes);
    const check = checkSignature(join(folder, "bulwark"));
    expect(check.exitCode).toBe(1);
    expect(check.directories[0]?.mismatched_pages).toEqual([Math.floor(at / 4096)]);
    expect(check.problems).toEqual([`1 of ${check.directories[0]?.code_slots} page hashes do not match`]);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}, 180_000);

describe("the macOS agents, served from beside the executable", () => {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-macos-download-"));
  let server: RunningServer;
  const get = (path: string) => fetch(`${server.url}/api/v1/agent/${path}`);
  const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

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
    for (const build of BUILDS)
      for (const path of [`download?${build.query}`, `download.sha256?${build.query}`]) {
        const response = await get(path);
        const body = (await response.json()) as { reason: string; details: string };
        expect([path, response.status, body.reason]).toEqual([path, 404, "agent_download_unavailable"]);
        expect(body.details).toContain(`put ${build.file} in ${folder}`);
        expect(body.details).toContain("npm run build");
      }
  });

  test("present: each build's bytes as bulwark, with its SHA-256 in the header and the checksum line", async () => {
    for (const build of BUILDS) copyFileSync(await macosExecutablePath(build), join(folder, build.file));
    for (const build of BUILDS) {
      const file = readFileSync(join(folder, build.file));
      const digest = sha256(file);
      const response = await get(`download?${build.query}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/octet-stream");
      expect(response.headers.get("content-disposition")).toBe('attachment; filename="bulwark"');
      expect(response.headers.get("x-bulwark-sha256")).toBe(digest);
      const served = new Uint8Array(await response.arrayBuffer());
      expect(served.length).toBe(file.length);
      expect(Buffer.compare(served, file)).toBe(0);
      const line = await get(`download.sha256?${build.query}`);
      expect([line.status, await line.text()]).toEqual([200, `${digest}  bulwark\n`]);
    }
    // Neither is confused with the Linux agent, the running executable.
    const linux = await get("download.sha256");
    expect(await linux.text()).toBe(`${sha256(readFileSync(join(folder, "bulwark")))}  bulwark\n`);
  }, 180_000);

  test("the console's macOS command fetches this Mac's build and shasum confirms it", async () => {
    // The enrollment page's module reads location.origin when it loads, as in the browser.
    Object.assign(globalThis, { location: new URL(server.url) });
    const { macosDownloadCommand } = await import("../../src/console/components/integration-enrollment-form");
    const digests = {
      arm64: sha256(readFileSync(join(folder, "bulwark-darwin-arm64"))),
      x64: sha256(readFileSync(join(folder, "bulwark-darwin-x64"))),
    };
    // bash with uname answering as each kind of Mac would, the real curl and Perl's shasum.
    for (const [machine, file] of [
      ["arm64", "bulwark-darwin-arm64"],
      ["x86_64", "bulwark-darwin-x64"],
    ] as const) {
      const work = mkdtempSync(join(tmpdir(), "bulwark-macos-fetch-"));
      try {
        const script = `uname() { echo ${machine}; }\n${macosDownloadCommand(server.url, digests)}`;
        const run = Bun.spawnSync(["bash", "-euo", "pipefail", "-c", script], { cwd: work });
        expect([machine, run.exitCode, run.stdout.toString(), run.stderr.toString()]).toEqual([
          machine,
          0,
          "bulwark: OK\n",
          "",
        ]);
        expect(Buffer.compare(readFileSync(join(work, "bulwark")), readFileSync(join(folder, file)))).toBe(0);
        expect(statSync(join(work, "bulwark")).mode & 0o111).toBe(0o111);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
    // A processor with no build: nothing is fetched, nothing made executable.
    const work = mkdtempSync(join(tmpdir(), "bulwark-macos-fetch-"));
    try {
      const script = `uname() { echo x86_64; }\n${macosDownloadCommand(server.url, { ...digests, x64: null })}`;
      const run = Bun.spawnSync(["bash", "-c", script], { cwd: work });
      expect(run.exitCode).not.toBe(0);
      expect(run.stderr.toString()).toContain("this server offers no macOS agent for x86_64");
      expect(existsSync(join(work, "bulwark"))).toBe(false);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);

  test("os=macos without arch, an unknown arch, and a pair with no build are 400s naming arch", async () => {
    for (const query of ["os=macos", "os=macos&arch=x86_64", "os=macos&arch=", "os=linux&arch=arm64"])
      for (const path of [`download?${query}`, `download.sha256?${query}`]) {
        const response = await get(path);
        const body = (await response.json()) as { code: number; reason: string; details: string };
        expect([path, response.status, body.code, body.reason]).toEqual([
          path,
          400,
          400,
          "validation_failed",
        ]);
        expect(body.details).toContain("arch");
      }
  });
});
