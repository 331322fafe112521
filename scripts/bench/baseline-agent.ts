/**
 * The floor of `bulwark agent run`'s process: an executable built with the same flags that checks in
 * every `interval` seconds (the same POST, with a device token, read as JSON) and does nothing else: no
 * facts, no enforcement, no state folder. Writes a "." to standard output after each check-in.
 * Usage: baseline-agent <server url> <device token> <interval seconds>
 */
const [url, token, interval] = process.argv.slice(2);
for (;;) {
  const response = await fetch(`${url}/api/v1/agent/checkin`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ agent_version: "0.1.0" }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.json();
  process.stdout.write(".");
  await Bun.sleep(Number(interval) * 1000);
}

// A module (for its top-level await), with nothing to export.
export {};
