import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { NotFoundError } from "../domain/errors";
import { VERSION } from "../version";

/** The executable `GET /api/v1/agent/download` serves, with its SHA-256 (hex). */
export interface AgentExecutable {
  path: string;
  size: number;
  sha256: string;
}

/**
 * The file name an enrolling machine saves it as; `sha256sum -c` reads the same name from the
 * checksum line.
 */
export const AGENT_FILE_NAME = "bulwark";

let known: { path: string; size: number; modified: number; sha256: Promise<string> } | null = null;

/**
 * The running executable, to hand to an enrolling machine: the server and the agent are one
 * executable, so an air-gapped site needs nothing else. Only the compiled executable (`bun build
 * --compile`, whose entry point lives in Bun's embedded file system) is served; under `npm start` the
 * running program is Bun itself, and the answer is 404 `agent_download_unavailable`. The digest is
 * computed once per file (streamed, not read whole) and again if the file was replaced.
 */
export async function agentExecutable(): Promise<AgentExecutable> {
  if (!isCompiled())
    throw new NotFoundError(
      "agent executable",
      "this server runs from source (npm start): build the executable with `npm run build` and serve dist/bulwark to offer it",
    );
  const path = process.execPath;
  const stat = await Bun.file(path).stat();
  if (!known || known.path !== path || known.size !== stat.size || known.modified !== stat.mtimeMs) {
    known = { path, size: stat.size, modified: stat.mtimeMs, sha256: digestFile(path) };
  }
  const current = known;
  try {
    return { path, size: current.size, sha256: await current.sha256 };
  } catch (error) {
    if (known === current) known = null;
    throw error;
  }
}

/** The `sha256sum` line of the executable: `<hex>  bulwark`. */
export function checksumLine(executable: AgentExecutable): string {
  return `${executable.sha256}  ${AGENT_FILE_NAME}\n`;
}

/** The download's headers: a file to save, its digest and the version it is. */
export function downloadHeaders(executable: AgentExecutable): Record<string, string> {
  return {
    "content-type": "application/octet-stream",
    "content-disposition": `attachment; filename="${AGENT_FILE_NAME}"`,
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
