/**
 * Whether the bulwark tunnel is up on a Mac, judged as wg-quick itself judges it (WireGuard/wireguard-tools,
 * `src/wg-quick/darwin.bash` `get_real_interface`, which first runs `wg show interfaces`): the name file
 * `/var/run/wireguard/bulwark.name` names a `utunN`, `/var/run/wireguard/utunN.sock` is a socket whose
 * time (`stat -f %m`, whole seconds) is within 2 s of the name file's, and something answers on it (wg,
 * src/ipc-uapi-unix.h, takes a socket that refuses a connection for a wireguard-go that is gone).
 *
 * The name file alone says nothing: /var/run keeps it until the Mac restarts, after wireguard-go died
 * (its socket is then gone, or refuses connections) or while another tunnel's wireguard-go has taken the
 * same utun number (a socket newer than the name file). The enforcement (the plan's `machine.tunnel`),
 * the tunnel's removal at unenroll and the `vpn_connected` fact all read it here.
 */
import { lstatSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { TUNNEL_NAME } from "./settings";

/** Where wg-quick keeps the name file and wireguard-go its socket, on the running Mac. */
export const WIREGUARD_RUN = "/var/run/wireguard";

/** How far apart (in whole seconds, exclusive) the socket's and the name file's times may be: darwin.bash's 2. */
const MAX_TIME_DIFFERENCE_SECONDS = 2;

/** How long a connection to the socket may take before it is taken as answered (wg would wait too). */
const CONNECT_TIME_LIMIT_MS = 1000;

/** The tunnel as wg-quick would see it: up as a utun, not up (and why), or not readable (and why). */
export type TunnelName =
  | { state: "up"; utun: string }
  | { state: "down"; detail: string }
  | { state: "unreadable"; detail: string };

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** Whether something listens on the Unix socket at `path`: true, false (refused or gone), or why not known. */
function answers(path: string): Promise<boolean | { problem: string }> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(true);
    }, CONNECT_TIME_LIMIT_MS);
    socket.on("connect", () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(true);
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      socket.destroy();
      const code = errorCode(error);
      resolve(code === "ECONNREFUSED" || code === "ENOENT" ? false : { problem: error.message });
    });
  });
}

/**
 * The tunnel in `runFolder` (the real folder: `/var/run/wireguard` on the running Mac, the same folder
 * under ROOT for a prepared tree), by darwin.bash's rule. Nothing is followed through a symbolic link and
 * nothing is changed (wg removes a dead socket; this only reads).
 */
export async function readTunnelName(runFolder: string): Promise<TunnelName> {
  const nameFile = `${WIREGUARD_RUN}/${TUNNEL_NAME}.name`;
  const namePath = join(runFolder, `${TUNNEL_NAME}.name`);
  let name: string;
  let nameSeconds: number;
  try {
    const found = lstatSync(namePath);
    if (!found.isFile()) return { state: "down", detail: `${nameFile} is not a file` };
    nameSeconds = Math.floor(found.mtimeMs / 1000);
    name = readFileSync(namePath, "utf8").trim();
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return { state: "down", detail: `no ${nameFile}` };
    return { state: "unreadable", detail: `${nameFile} cannot be read: ${(error as Error).message}` };
  }
  if (!/^utun\d+$/.test(name))
    return { state: "down", detail: `${nameFile} names ${JSON.stringify(name)}, not a utun` };
  const socketFile = `${WIREGUARD_RUN}/${name}.sock`;
  const socketPath = join(runFolder, `${name}.sock`);
  const left = `${nameFile} names ${name}, but`;
  let socketSeconds: number;
  try {
    const found = lstatSync(socketPath);
    if (!found.isSocket()) return { state: "down", detail: `${left} ${socketFile} is not a socket` };
    socketSeconds = Math.floor(found.mtimeMs / 1000);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR")
      return { state: "down", detail: `${left} ${socketFile} is gone (its wireguard-go has ended)` };
    return { state: "unreadable", detail: `${socketFile} cannot be read: ${(error as Error).message}` };
  }
  const difference = socketSeconds - nameSeconds;
  if (Math.abs(difference) >= MAX_TIME_DIFFERENCE_SECONDS)
    return {
      state: "down",
      detail: `${left} ${socketFile} is ${Math.abs(difference)} s ${difference > 0 ? "newer" : "older"} than it: another wireguard-go's, the name file is left from an earlier run`,
    };
  const answer = await answers(socketPath);
  if (answer === false)
    return { state: "down", detail: `${left} nothing answers on ${socketFile} (its wireguard-go has died)` };
  if (answer !== true)
    return { state: "unreadable", detail: `${socketFile} cannot be reached: ${answer.problem}` };
  return { state: "up", utun: name };
}
