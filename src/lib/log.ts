/**
 * Structured logs: one line per entry, a JSON object (`json`) for log shippers or a readable line
 * (`pretty`) for a terminal. Written synchronously in this process: pino-style worker-thread transports
 * fail in the compiled executable, and a line must not be lost when the process stops right after it.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "json" | "pretty";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * An info entry written whatever log.level says: where the server listens, the first run's generated
   * password, that it stopped. An operator who turned the log down to warnings still needs these.
   */
  announce(message: string, fields?: LogFields): void;
  /** False when entries of `level` are dropped: callers skip building their fields. */
  isEnabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  format: LogFormat;
  level: LogLevel;
  /** Where each line goes (without its newline); standard output by default. */
  write?: (line: string) => void;
}

const SEVERITY: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Field names whose values are never written, whatever a caller passes: a safety net under the rule
 * that no password, token, secret or key is logged. `*_id` fields (api_key_id) are identifiers, not keys.
 */
const SECRET_FIELD =
  /(password|passphrase|secret|token|authorization|cookie|private_key|^key|_key|credential)$/i;
export const REDACTED = "[redacted]";

/** An Error as a plain object (name, message, stack, and its cause's); anything else as it is. */
function plain(value: unknown, depth = 0): unknown {
  if (value instanceof Error) {
    const described: Record<string, unknown> = {
      name: value.name,
      message: value.message,
      stack: value.stack,
    };
    if (value.cause !== undefined && depth < 3) described.cause = plain(value.cause, depth + 1);
    return described;
  }
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** Whether a field name is a secret's, remembered per name: every request's line names the same few. */
const secretNames = new Map<string, boolean>();
const MAX_REMEMBERED_NAMES = 1000;

function isSecretName(name: string): boolean {
  let isSecret = secretNames.get(name);
  if (isSecret === undefined) {
    isSecret = SECRET_FIELD.test(name);
    if (secretNames.size < MAX_REMEMBERED_NAMES) secretNames.set(name, isSecret);
  }
  return isSecret;
}

/** The entry's fields with secrets redacted, errors made plain and undefined ones left out. */
function redacted(fields: LogFields): LogFields {
  const safe: LogFields = {};
  for (const name in fields) {
    const value = fields[name];
    // `__proto__` would set the entry's prototype, not a field: inherited fields escape redaction.
    if (value === undefined || name === "__proto__" || !Object.hasOwn(fields, name)) continue;
    safe[name] = isSecretName(name)
      ? REDACTED
      : typeof value === "object" || typeof value === "bigint"
        ? plain(value)
        : value;
  }
  return safe;
}

function jsonLine(level: LogLevel, message: string, fields: LogFields): string {
  try {
    const entry: LogFields = { time: new Date().toISOString(), level, msg: message };
    for (const name in fields) if (Object.hasOwn(fields, name)) entry[name] = fields[name];
    return JSON.stringify(entry);
  } catch {
    // A field that cannot be written as JSON (a cycle) must not lose the entry.
    return JSON.stringify({
      time: new Date().toISOString(),
      level,
      msg: message,
      fields: "[unserializable]",
    });
  }
}

/** `12:00:00.123 WARN  message key=value ...`, with an error's stack on the lines below. */
function prettyLine(level: LogLevel, message: string, fields: LogFields): string {
  const parts = [`${new Date().toISOString().slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${message}`];
  const stacks: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value && typeof value === "object" && "stack" in value && typeof value.stack === "string") {
      parts.push(`${name}="${(value as { message?: string }).message ?? ""}"`);
      stacks.push(value.stack);
      continue;
    }
    const text = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${name}=${typeof value === "string" && /[\s"=]/.test(text) ? JSON.stringify(text) : text}`);
  }
  return [parts.join(" "), ...stacks.map((stack) => stack.replace(/^/gm, "    "))].join("\n");
}

/**
 * Writes a line to standard output. A reader that went away (a pipe closed, a log collector restarted:
 * EPIPE) must not stop the service: the line is dropped, and the server keeps answering.
 */
function writeToStdout(line: string): void {
  try {
    process.stdout.write(`${line}\n`);
  } catch {
    // Nowhere left to write to.
  }
}
let isStdoutGuarded = false;

export function createLogger(options: LoggerOptions): Logger {
  const threshold = SEVERITY[options.level];
  if (!options.write && !isStdoutGuarded) {
    isStdoutGuarded = true;
    process.stdout.on("error", () => {});
  }
  const write = options.write ?? writeToStdout;
  const format = options.format === "json" ? jsonLine : prettyLine;
  const entry =
    (level: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      if (SEVERITY[level] < threshold) return;
      write(format(level, message, redacted(fields)));
    };
  return {
    debug: entry("debug"),
    info: entry("info"),
    warn: entry("warn"),
    error: entry("error"),
    announce: (message, fields = {}) => write(format("info", message, redacted(fields))),
    isEnabled: (level) => SEVERITY[level] >= threshold,
  };
}

/** `auto`: readable lines on a terminal, JSON lines otherwise (a service manager, a pipe, a file). */
export function resolveLogFormat(format: LogFormat | "auto", isTerminal = Boolean(process.stdout.isTTY)) {
  return format === "auto" ? (isTerminal ? "pretty" : "json") : format;
}
