/**
 * Connecting to PostgreSQL with Bun.sql, and saying in one line why it failed: the server's own words
 * when it answered (authentication, a missing database), else what the network says (Bun.sql alone
 * only says "Failed to connect"). Used by `serve` and every command on `database.url`, and by `db copy`.
 */
import { lookup } from "node:dns/promises";
import { connect } from "node:net";
import { SQL as BunSql } from "bun";
import { firstLine } from "../../lib/error-cause";
import { redactPgUrl } from "../../lib/redact-url";

export { redactPgUrl };

/** A URL could not be used, or PostgreSQL could not be reached or signed in to; the message says why. */
export class PgConnectError extends Error {}

export interface PgConnectOptions {
  /** The most connections the pool opens. */
  max: number;
  /** Seconds to wait for a connection before saying the server does not answer. */
  connectionTimeout: number;
  /** The password, when not in the URL (database.password_file). */
  password?: string;
  /** Seconds an idle pooled connection stays open. */
  idleTimeout?: number;
  /** Run-time parameters set on each connection as it opens (statement_timeout, application_name). */
  connection?: Record<string, string | number>;
}

/** Where a URL points, for messages: `postgresql://USER@HOST:PORT/DATABASE`, never the password. */
export function describePgUrl(url: string): {
  host: string;
  port: number;
  database: string;
  user: string;
  label: string;
} {
  const parsed = parsePgUrl(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost";
  const port = Number(parsed.port || 5432);
  const database = decodeURIComponent(parsed.pathname.slice(1)) || parsed.username || "postgres";
  const user = decodeURIComponent(parsed.username);
  const label = `postgresql://${user ? `${user}@` : ""}${parsed.host}/${database}`;
  return { host, port, database, user, label };
}

function parsePgUrl(url: string): URL {
  try {
    const parsed = new URL(url);
    if (/^postgres(ql)?:$/.test(parsed.protocol)) return parsed;
  } catch {}
  throw new PgConnectError(
    `not a PostgreSQL URL: ${redactPgUrl(url)} (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)`,
  );
}

/** Opens a pool on `url` and runs one query on it, so that a URL that does not work fails here. */
export async function connectPg(
  url: string,
  options: PgConnectOptions,
): Promise<{ sql: BunSql; label: string }> {
  const { host, port, database, user, label } = describePgUrl(url);
  // Bun.sql takes the password from the URL, else from the option, else from PGPASSWORD.
  const client = new BunSql(url, {
    max: options.max,
    connectionTimeout: options.connectionTimeout,
    idleTimeout: options.idleTimeout ?? 0,
    ...(options.connection !== undefined ? { connection: options.connection } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
  });
  try {
    await client`SELECT 1`;
    return { sql: client, label };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new PgConnectError(
      `cannot connect to PostgreSQL at ${host.includes(":") ? `[${host}]` : host}:${port} (database ${database}${user ? `, user ${user}` : ""}): ${await connectionProblem(error, host, port, options.connectionTimeout)}`,
    );
  }
}

async function connectionProblem(
  error: unknown,
  host: string,
  port: number,
  timeoutSeconds: number,
): Promise<string> {
  const { code, errno } = error as { code?: string; errno?: string };
  if (code === "ERR_POSTGRES_SERVER_ERROR" && errno) return firstLine(error);
  if (code !== "ERR_POSTGRES_CONNECTION_REFUSED" && code !== "ERR_POSTGRES_CONNECTION_TIMEOUT")
    return firstLine(error);
  try {
    await lookup(host);
  } catch {
    return `the host name ${host} does not resolve`;
  }
  const problem = await new Promise<string | null>((resolve) => {
    const socket = connect({ host, port, timeout: timeoutSeconds * 1000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(null);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(`no answer within ${timeoutSeconds} s`);
    });
    socket.once("error", (socketError: NodeJS.ErrnoException) => {
      resolve(
        socketError.code === "ECONNREFUSED"
          ? "connection refused (is PostgreSQL running and listening there?)"
          : `${socketError.code ?? "error"}: ${firstLine(socketError)}`,
      );
    });
  });
  return problem ?? `${firstLine(error)} (the port accepts connections: is it PostgreSQL?)`;
}
