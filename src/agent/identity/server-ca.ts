import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { AgentState } from "./agent-state";

/** One PEM certificate (RFC 7468's "CERTIFICATE" label). */
export const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/** The server's CA file cannot be used: why, to be said naming it. */
export class ServerCaError extends Error {}

/**
 * The certificates of a CA file that verifies the server's TLS certificate, as PEM (only the
 * certificate blocks: a key someone left in the same file is not copied). Throws ServerCaError with why
 * it cannot be used: unreadable, no PEM certificate in it, or one that does not parse.
 */
export function readServerCa(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new ServerCaError(code === "ENOENT" ? "no such file" : message);
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw new ServerCaError(
      "holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA's certificate",
    );
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new ServerCaError(`a certificate in it cannot be read (${(error as Error).message})`);
    }
  }
  return `${blocks.join("\n")}\n`;
}

/**
 * The CA that state.json names (`ca_file`), when there is one: the copy enroll keeps in the state folder,
 * or, from an older enrollment, the path it was given (a relative one is read from the current folder,
 * as it was then). One that cannot be read is an error naming it, never ignored: the system's trust
 * store would then refuse the server with a less helpful word.
 */
export function serverCaOf(state: AgentState): string | null {
  if (!state.ca_file) return null;
  try {
    return readServerCa(state.ca_file);
  } catch (error) {
    const relative = isAbsolute(state.ca_file) ? "" : ", a path relative to the folder enroll ran in";
    throw new ServerCaError(
      `cannot use the server's CA file ${state.ca_file} (ca_file of state.json${relative}): ${(error as Error).message}; put it back, or enroll again with --ca-file`,
    );
  }
}
