/**
 * `agent capture` on Linux: a machine's readings recorded into a folder give back, replayed, exactly the
 * facts the machine gave, and what may name a secret is not in the folder.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CaptureError, captureFacts, factsFromCapture } from "../../src/agent/capture";
import { collectFacts } from "../../src/agent/facts/collect-facts";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";

const folders: string[] = [];
afterAll(() => {
  removeMachines();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

test("a capture of a machine replays to the same facts, with no line that names a password or key", async () => {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/modprobe.d/bulwark.conf": "install usb-storage /bin/false\ninstall uas /bin/false\n",
      "etc/dconf/db/local.d/00-lock": "[org/gnome/desktop/screensaver]\nlock-enabled=true\n",
      "etc/dconf/db/local.d/locks/screensaver": "/org/gnome/desktop/screensaver/lock-enabled\n",
      "etc/dconf/db/local.d/10-proxy": "[system/proxy/http]\nhost='proxy.example.com'\npassword='hunter2'\n",
      "etc/ufw/ufw.conf": "ENABLED=yes\n",
    },
  });
  const folder = join(mkdtempSync(join(tmpdir(), "bulwark-capture-")), "case");
  folders.push(folder);
  const captured = await captureFacts(root, folder);
  const direct = await collectFacts(root);
  expect(captured.facts).toEqual(direct.facts);
  expect(captured.facts).toMatchObject({
    disk_encrypted: true,
    usb_storage_blocked: true,
    screen_lock_enabled: true,
  });

  const replayed = await factsFromCapture(folder);
  expect(replayed.os_version).toBe(direct.os_version);
  expect(replayed.facts).toEqual(direct.facts);
  expect(replayed.notes).toEqual(direct.notes);

  const everything = readdirSync(folder, { recursive: true })
    .map((name) => join(folder, String(name)))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, "utf8"))
    .join("\n");
  expect(everything).toContain("proxy.example.com");
  expect(everything).not.toContain("hunter2");
  // Only whoever ran it (root) reads it.
  expect(statSync(folder).mode & 0o777).toBe(0o700);
  expect(statSync(join(folder, "capture.json")).mode & 0o777).toBe(0o600);
});

test("a folder that holds no capture is one line, exit 2", async () => {
  const empty = mkdtempSync(join(tmpdir(), "bulwark-no-capture-"));
  folders.push(empty);
  const error = await factsFromCapture(empty).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(CaptureError);
  expect((error as CaptureError).exitCode).toBe(2);
  expect((error as Error).message).toStartWith(`${empty} holds no capture:`);
});
