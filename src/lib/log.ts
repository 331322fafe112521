/**
 * Structured logs: one line per entry, a JSON object (`json`) for log shippers or a readable line
 * (`pretty`) for a terminal. Written in this process: pino-style worker-thread transports fail in the
 * compiled executable. Standard output is written once per event-loop turn (stdoutLines).
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
 * Writes text to standard output. A reader that went away (a pipe closed, a log collector restarted:
 * EPIPE) must not stop the service: the text is dropped, and the server keeps answering.
 */
function writeToStdout(text: string): void {
  try {
    process.stdout.write(text);
  } catch {
    // Nowhere left to write to.
  }
}

/**
 * Standard output's lines, written in batches: the lines of one event-loop turn go out in one write
 * when the turn ends (setImmediate). A busy server answers dozens of requests in a turn, and one write
 * per request line cost ~15 µs of a ~95 µs device read: the system call, and waking the process that
 * reads the pipe. A warning, an error or an announcement is written at once, after the lines before it,
 * and so is whatever is left when the process exits (process.exit included; flushLog for a caller that
 * writes to standard error first). What can be lost: the info lines of the last turn, when the process
 * ends without exiting (kill -9, a fatal signal it does not handle, a crash of the runtime).
 */
const stdoutLines = {
  pending: [] as string[],
  isFlushScheduled: false,
  isExitHooked: false,
  add(line: string, isUrgent: boolean): void {
    this.pending.push(line);
    if (isUrgent) this.flush();
    else if (!this.isFlushScheduled) {
      this.isFlushScheduled = true;
      setImmediate(flushLog);
    }
  },
  flush(): void {
    this.isFlushScheduled = false;
    if (this.pending.length === 0) return;
    const text = `${this.pending.join("\n")}\n`;
    this.pending = [];
    writeToStdout(text);
  },
};
/** Writes the lines still waiting, now: before a message on standard error that must come after them. */
export function flushLog(): void {
  stdoutLines.flush();
}

function guardStdout(): void {
  if (stdoutLines.isExitHooked) return;
  stdoutLines.isExitHooked = true;
  process.stdout.on("error", () => {});
  process.on("exit", flushLog);
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = SEVERITY[options.level];
  const custom = options.write;
  if (!custom) guardStdout();
  const write = custom
    ? (line: string) => custom(line)
    : (line: string, isUrgent: boolean) => stdoutLines.add(line, isUrgent);
  const format = options.format === "json" ? jsonLine : prettyLine;
  const entry =
    (level: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      if (SEVERITY[level] < threshold) return;
      write(format(level, message, redacted(fields)), SEVERITY[level] >= SEVERITY.warn);
    };
  return {
    debug: entry("debug"),
    info: entry("info"),
    warn: entry("warn"),
    error: entry("error"),
    announce: (message, fields = {}) => write(format("info", message, redacted(fields)), true),
    isEnabled: (level) => SEVERITY[level] >= threshold,
  };
}

/** `auto`: readable lines on a terminal, JSON lines otherwise (a service manager, a pipe, a file). */
export function resolveLogFormat(format: LogFormat | "auto", isTerminal = Boolean(process.stdout.isTTY)) {
  return format === "auto" ? (isTerminal ? "pretty" : "json") : format;
}
