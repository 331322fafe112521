/**
 * Tells the people logged in to the machine that it is being wiped: a desktop notification on each
 * graphical session's bus (`notify-send`, else `gdbus`, run as that session's user), and `wall` to the
 * terminals. The report counts only the sessions a notice was delivered to.
 */
import type { ProgramRunner } from "../facts/fact";

/** Whom the wipe told, as reported to the server (WipeReport.notification). */
export interface NotificationReport {
  requested: boolean;
  sessions: number;
  methods: ("desktop" | "wall")[];
  detail?: string;
}

/** A session from logind: its user, and whether it is graphical or on a terminal. */
interface Session {
  id: string;
  user: string;
  uid: number;
  type: string;
  tty: string;
}

const GRAPHICAL = new Set(["x11", "wayland", "mir"]);

async function logindSessions(run: ProgramRunner): Promise<Session[] | null> {
  const listed = await run(["loginctl", "list-sessions", "--no-legend", "--no-pager"]);
  if (listed.code !== 0) return null;
  const sessions: Session[] = [];
  for (const line of listed.stdout.split("\n")) {
    const id = line.trim().split(/\s+/)[0];
    if (!id) continue;
    const shown = await run([
      "loginctl",
      "show-session",
      id,
      "-p",
      "Name",
      "-p",
      "User",
      "-p",
      "Type",
      "-p",
      "TTY",
      "-p",
      "State",
    ]);
    if (shown.code !== 0) continue;
    const values = Object.fromEntries(
      shown.stdout
        .split("\n")
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    if (values.State === "closing") continue;
    sessions.push({
      id,
      user: values.Name ?? "",
      uid: Number(values.User),
      type: values.Type ?? "",
      tty: values.TTY ?? "",
    });
  }
  return sessions;
}

/** Shows `title` and `body` on the session's desktop, as its user; whether it was delivered. */
async function notifyDesktop(
  run: ProgramRunner,
  session: Session,
  title: string,
  body: string,
): Promise<boolean> {
  const asUser = [
    "runuser",
    "-u",
    session.user,
    "--",
    "env",
    `DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/${session.uid}/bus`,
  ];
  const sent = await run([...asUser, "notify-send", "--urgency=critical", "--app-name=Bulwark", title, body]);
  if (sent.code === 0) return true;
  const called = await run([
    ...asUser,
    "gdbus",
    "call",
    "--session",
    "--dest",
    "org.freedesktop.Notifications",
    "--object-path",
    "/org/freedesktop/Notifications",
    "--method",
    "org.freedesktop.Notifications.Notify",
    "Bulwark",
    "0",
    "",
    title,
    body,
    "[]",
    "{'urgency': <byte 2>}",
    "0",
  ]);
  return called.code === 0;
}

/** The terminal sessions `who` lists (utmp), when logind cannot say. */
async function terminalCount(run: ProgramRunner): Promise<number> {
  const who = await run(["who"]);
  return who.code === 0 ? who.stdout.split("\n").filter((line) => line.trim() !== "").length : 0;
}

/** Notifies every logged-in session that the machine's work data is being erased, and says whom it reached. */
export async function notifyUsers(run: ProgramRunner, reason: string): Promise<NotificationReport> {
  const title = "This computer's work data is being erased";
  const body = `Your organization wiped the work profile of this computer (${reason}). Save nothing more to work folders.`;
  const methods = new Set<"desktop" | "wall">();
  let reached = 0;
  let desktops = 0;
  const sessions = await logindSessions(run);
  const graphical = (sessions ?? []).filter((session) => GRAPHICAL.has(session.type) && session.user !== "");
  for (const session of graphical)
    if (await notifyDesktop(run, session, title, body)) {
      desktops += 1;
      methods.add("desktop");
    }
  reached += desktops;
  const terminals =
    sessions === null
      ? await terminalCount(run)
      : sessions.filter((session) => !GRAPHICAL.has(session.type) && session.tty !== "").length;
  if (terminals > 0) {
    const wall = await run(["wall", `${title}: ${body}`]);
    if (wall.code === 0) {
      reached += terminals;
      methods.add("wall");
    }
  }
  const detail =
    graphical.length + terminals === 0
      ? "no one was logged in"
      : desktops < graphical.length
        ? `${graphical.length - desktops} of ${graphical.length} graphical sessions could not be shown the notice`
        : reached === 0
          ? "wall could not reach the terminals"
          : undefined;
  return { requested: true, sessions: reached, methods: [...methods], ...(detail ? { detail } : {}) };
}
