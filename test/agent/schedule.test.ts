import { describe, expect, test } from "bun:test";
import {
  backoffDelay,
  isIdentityLost,
  MAX_BACKOFF_SECONDS,
  nextCheckInDelay,
} from "../../src/agent/run/schedule";

describe("when the agent checks in again", () => {
  test("after a success: the server's interval, spread by ±10%", () => {
    expect(nextCheckInDelay(300, () => 0)).toBe(270);
    expect(nextCheckInDelay(300, () => 1)).toBeCloseTo(330);
    expect(nextCheckInDelay(300, () => 0.5)).toBe(300);
  });

  test("after failures: 5 s doubling to 15 minutes, then jitter up to twice that, added after the cap", () => {
    const least = (failures: number) => backoffDelay(failures, null, () => 0);
    const most = (failures: number) => backoffDelay(failures, null, () => 1);
    expect([1, 2, 3, 4].map(least)).toEqual([5, 10, 20, 40]);
    expect(least(9)).toBe(MAX_BACKOFF_SECONDS);
    expect(least(50)).toBe(MAX_BACKOFF_SECONDS);
    // At the cap, a fleet spreads over [15 min, 30 min] instead of returning together.
    expect(most(50)).toBe(2 * MAX_BACKOFF_SECONDS);
  });

  test("a Retry-After is honoured as the least wait, never shortened by the backoff", () => {
    expect(backoffDelay(1, 120, () => 0)).toBe(120);
    expect(backoffDelay(1, 120, () => 1)).toBeCloseTo(132);
    expect(backoffDelay(20, 5, () => 0)).toBe(MAX_BACKOFF_SECONDS);
  });
});

describe("when 401s mean the identity is gone", () => {
  const start = new Date("2026-11-27T10:00:00Z");
  const later = (minutes: number) => new Date(start.getTime() + minutes * 60_000);
  test("one 401, or 401s for under an hour, keep the identity", () => {
    expect(isIdentityLost("device_token_invalid", start, start)).toBe(false);
    expect(isIdentityLost("device_token_revoked", start, later(59))).toBe(false);
  });
  test("a device the server says was wiped, or 401s for over an hour, need a new enrollment", () => {
    expect(isIdentityLost("device_wiped", start, start)).toBe(true);
    expect(isIdentityLost("device_token_invalid", start, later(61))).toBe(true);
  });
});
