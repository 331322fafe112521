/**
 * Preloaded into every test file (bunfig.toml): any 5xx answer, or any unhandled error or "response did
 * not match its schema" the server logs, fails the test during which it happened. A test that provokes
 * a server failure on purpose (the database taken away) says so with `expectServerErrors`.
 */
import { afterEach } from "bun:test";

const SERVER_FAILURE_LOG = /unhandled error|did not match its schema|authentication failed/;

const observed: string[] = [];
let expectedStatuses = new Set<number>();
let isLogExpected = false;

/** Called by the request helpers for every answer. */
export function noteServerAnswer(method: string, path: string, status: number, body: unknown): void {
  if (status >= 500 && !expectedStatuses.has(status))
    observed.push(`${method} ${path} answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
}

/** Called with what the executable printed, on either stream, a whole line or more at a time. */
export function noteServerLog(text: string): void {
  for (const line of text.split("\n"))
    if (SERVER_FAILURE_LOG.test(line) && !isLogExpected) observed.push(line);
}

/** The current test provokes these 5xx statuses (and the server's error log) on purpose. */
export function expectServerErrors(...statuses: number[]): void {
  expectedStatuses = new Set(statuses);
  isLogExpected = true;
}

const originalConsoleError = console.error;
console.error = (...args: unknown[]) => {
  noteServerLog(args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(" "));
  originalConsoleError(...args);
};

afterEach(() => {
  const found = observed.splice(0);
  expectedStatuses = new Set();
  isLogExpected = false;
  if (found.length > 0)
    throw new Error(`the server failed during this test (5xx or an unhandled error):\n${found.join("\n")}`);
});
