import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { NotFoundError, ValidationError } from "../domain/errors";
import { VERSION } from "../version";

/** The systems the agent is offered for: `?os=` and `?arch=` of `GET /api/v1/agent/download`. */
export interface AgentPlatform {
  os: "linux" | "windows" | "macos";
  /** x64 when left out, but for macOS, whose two builds are both real choices. */
  arch?: "x64" | "arm64" | undefined;
}

/** The executable `GET /api/v1/agent/download` serves, with its SHA-256 (hex). */
export interface AgentExecutable {
  path: string;
  /** The name an enrolling machine saves it as; `sha256sum -c` reads the same name from the checksum line. */
  fileName: string;
  size: number;
  sha256: string;
}

/**
 * The Windows agent, which the server serves from beside its own executable: `npm run build` makes
 * dist/bulwark-windows-x64.exe beside dist/bulwark.
 */
export const WINDOWS_AGENT_FILE = "bulwark-windows-x64.exe";

/**
 * Each agent other than the running executable: the file `npm run build` makes beside dist/bulwark, and
 * the name the machine saves it as. The macOS ones are ad-hoc signed (scripts/macho-codesign.ts).
 */
const AGENT_FILES = {
  "windows-x64": { file: WINDOWS_AGENT_FILE, fileName: "bulwark.exe" },
  "macos-arm64": { file: "bulwark-darwin-arm64", fileName: "bulwark" },
  "macos-x64": { file: "bulwark-darwin-x64", fileName: "bulwark" },
} as const;

/** Each file's digest, kept while its size and modification time stay as they were. */
const known = new Map<string, { size: number; modified: number; sha256: Promise<string> }>();

/**
 * Which agent `platform` asks for: the running executable for Linux x64, else one of AGENT_FILES. 400
 * naming `arch` for a pair no build exists for (Linux or Windows on arm64) and for macOS without one.
 */
function agentFile(platform: AgentPlatform): (typeof AGENT_FILES)[keyof typeof AGENT_FILES] | null {
  if (platform.os === "macos" && platform.arch === undefined)
    throw new ValidationError("invalid query", [
      { field: "arch", message: "is required with os=macos: arm64 (Apple silicon) or x64 (Intel)" },
    ]);
  const arch = platform.arch ?? "x64";
  if (platform.os === "linux" && arch === "x64") return null;
  const key = `${platform.os}-${arch}`;
  if (!(key in AGENT_FILES))
    throw new ValidationError("invalid query", [
      { field: "arch", message: `no agent is built for ${platform.os} on ${arch}`, received: arch },
    ]);
  return AGENT_FILES[key as keyof typeof AGENT_FILES];
}

/**
 * The agent for `platform`, to hand to an enrolling machine: the server and the agent are one
 * executable, so an air-gapped site needs nothing else. For Linux, the running executable; for Windows
 * and macOS, their build beside it (AGENT_FILES). Only the compiled executable (`bun build --compile`,
 * whose entry point lives in Bun's embedded file system) offers any: under `npm start` the running
 * program is Bun itself, and the answer is 404 `agent_download_unavailable`, as it is for a file that is
 * not there. Each file's digest is computed once (streamed, not read whole) and again if it was replaced.
 */
export async function agentExecutable(platform: AgentPlatform = { os: "linux" }): Promise<AgentExecutable> {
  const beside = agentFile(platform);
  if (!isCompiled())
    throw new NotFoundError(
      "agent executable",
      beside
        ? `this server runs from source (npm start): build with \`npm run build\` and serve dist/bulwark, which offers dist/${beside.file} beside it`
        : "this server runs from source (npm start): build the executable with `npm run build` and serve dist/bulwark to offer it",
    );
  const path = beside ? join(dirname(process.execPath), beside.file) : process.execPath;
  const stat = await Bun.file(path)
    .stat()
    .catch(() => null);
  if (!stat?.isFile())
    throw new NotFoundError(
      "agent executable",
      beside
        ? `put ${beside.file} in ${dirname(path)}, beside this server's executable (\`npm run build\` makes dist/${beside.file} beside dist/bulwark)`
        : `this server's executable cannot be read at ${path}`,
    );
  let entry = known.get(path);
  if (!entry || entry.size !== stat.size || entry.modified !== stat.mtimeMs) {
    entry = { size: stat.size, modified: stat.mtimeMs, sha256: digestFile(path) };
    known.set(path, entry);
  }
  const current = entry;
  try {
    return {
      path,
      fileName: beside?.fileName ?? "bulwark",
      size: current.size,
      sha256: await current.sha256,
    };
  } catch (error) {
    if (known.get(path) === current) known.delete(path);
    throw error;
  }
}

/** The `sha256sum` line of the executable: `<hex>  bulwark` (`bulwark.exe` for Windows). `shasum -a 256 -c` reads it too. */
export function checksumLine(executable: AgentExecutable): string {
  return `${executable.sha256}  ${executable.fileName}\n`;
}

/** The download's headers: a file to save, its digest and the version it is. */
export function downloadHeaders(executable: AgentExecutable): Record<string, string> {
  return {
    "content-type": "application/octet-stream",
    "content-disposition": `attachment; filename="${executable.fileName}"`,
    "x-bulwark-version": VERSION,
    "x-bulwark-sha256": executable.sha256,
  };
}

/** Whether this process is the compiled executable (its entry point in Bun's embedded file system). */
function isCompiled(): boolean {
  return Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main);
}

async function digestFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

/** One PEM certificate block. */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The certificate at the top of the chain Bulwark's own TLS serves (the last of server.tls_cert: the
 * root, for a chain that ends in it, or the certificate itself when self-signed), and its SHA-256 (of
 * the DER, hex): what `bulwark agent enroll --ca-sha256` pins. 404 server_ca_unavailable when Bulwark
 * does not terminate TLS (a proxy in front does: its CA is the proxy's business).
 */
export function serverCaCertificate(certFile: string): { pem: string; sha256: string } {
  if (certFile === "")
    throw new NotFoundError(
      "server CA",
      "this server does not terminate TLS (server.tls_cert is not set): give agents the CA of whatever does, with --ca-file",
    );
  const blocks = readFileSync(certFile, "utf8").match(PEM_CERTIFICATE) ?? [];
  const top = blocks.at(-1);
  if (top === undefined) throw new NotFoundError("server CA", "server.tls_cert holds no PEM certificate");
  const sha256 = new X509Certificate(top).fingerprint256.replaceAll(":", "").toLowerCase();
  return { pem: `${top}\n`, sha256 };
}
