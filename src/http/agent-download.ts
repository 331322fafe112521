import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { NotFoundError } from "../domain/errors";
import { VERSION } from "../version";

/** The systems the agent is offered for: `?os=` and `?arch=` of `GET /api/v1/agent/download`. */
export interface AgentPlatform {
  os: "linux" | "windows";
  arch: "x64";
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

/** Each file's digest, kept while its size and modification time stay as they were. */
const known = new Map<string, { size: number; modified: number; sha256: Promise<string> }>();

/**
 * The agent for `platform`, to hand to an enrolling machine: the server and the agent are one
 * executable, so an air-gapped site needs nothing else. For Linux, the running executable; for Windows,
 * WINDOWS_AGENT_FILE beside it. Only the compiled executable (`bun build --compile`, whose entry point
 * lives in Bun's embedded file system) offers either: under `npm start` the running program is Bun
 * itself, and the answer is 404 `agent_download_unavailable`, as it is for a Windows file that is not
 * there. Each file's digest is computed once (streamed, not read whole) and again if it was replaced.
 */
export async function agentExecutable(
  platform: AgentPlatform = { os: "linux", arch: "x64" },
): Promise<AgentExecutable> {
  const isWindows = platform.os === "windows";
  if (!isCompiled())
    throw new NotFoundError(
      "agent executable",
      isWindows
        ? `this server runs from source (npm start): build with \`npm run build\` and serve dist/bulwark, which offers dist/${WINDOWS_AGENT_FILE} beside it`
        : "this server runs from source (npm start): build the executable with `npm run build` and serve dist/bulwark to offer it",
    );
  const path = isWindows ? join(dirname(process.execPath), WINDOWS_AGENT_FILE) : process.execPath;
  const stat = await Bun.file(path)
    .stat()
    .catch(() => null);
  if (!stat?.isFile())
    throw new NotFoundError(
      "agent executable",
      isWindows
        ? `put ${WINDOWS_AGENT_FILE} in ${dirname(path)}, beside this server's executable (\`npm run build\` makes dist/${WINDOWS_AGENT_FILE} beside dist/bulwark)`
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
      fileName: isWindows ? "bulwark.exe" : "bulwark",
      size: current.size,
      sha256: await current.sha256,
    };
  } catch (error) {
    if (known.get(path) === current) known.delete(path);
    throw error;
  }
}

/** The `sha256sum` line of the executable: `<hex>  bulwark` (`bulwark.exe` for Windows). */
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
