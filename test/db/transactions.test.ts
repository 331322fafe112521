import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectionOf, type Db, openDatabase, withTransaction } from "../../src/db/client";

const folder = mkdtempSync(join(tmpdir(), "bulwark-tx-"));
const database = openDatabase({ path: join(folder, "tx.db"), synchronous: "normal" });
database.sqlite.exec("CREATE TABLE notes (text TEXT NOT NULL)");
const db = database.db;
afterAll(() => {
  database.close();
  rmSync(folder, { recursive: true, force: true });
});

const write = (tx: Db, text: string) =>
  connectionOf(tx).prepare("INSERT INTO notes (text) VALUES (?)").run(text);
const read = (handle: Db) =>
  (connectionOf(handle).prepare("SELECT text FROM notes ORDER BY rowid").all() as { text: string }[]).map(
    (row) => row.text,
  );
const clear = () => withTransaction(db, (tx) => connectionOf(tx).exec("DELETE FROM notes"));

test("a transaction that awaits keeps the writer: the next one begins after it commits and sees its rows", async () => {
  await clear();
  const order: string[] = [];
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = withTransaction(db, async (tx) => {
    write(tx, "first, before awaiting");
    order.push("first wrote");
    await held;
    write(tx, "first, after awaiting");
    order.push("first done");
  });
  const second = withTransaction(db, (tx) => {
    order.push("second began");
    const seen = read(tx);
    write(tx, "second");
    return seen;
  });
  // While the first awaits, the reader sees nothing of it, and the second has not begun.
  await Bun.sleep(20);
  expect(read(db)).toEqual([]);
  expect(order).toEqual(["first wrote"]);
  release();
  await first;
  expect(await second).toEqual(["first, before awaiting", "first, after awaiting"]);
  expect(order).toEqual(["first wrote", "first done", "second began"]);
  expect(read(db)).toEqual(["first, before awaiting", "first, after awaiting", "second"]);
});

test("a body that throws keeps none of its rows, and the writer is free for the next transaction", async () => {
  await clear();
  await expect(
    withTransaction(db, async (tx) => {
      write(tx, "lost");
      await Bun.sleep(1);
      throw new Error("refused");
    }),
  ).rejects.toThrow("refused");
  await withTransaction(db, (tx) => write(tx, "kept"));
  expect(read(db)).toEqual(["kept"]);
});

test("a write outside a transaction fails at once: the reader is read-only", async () => {
  await clear();
  expect(() => write(db, "bypassing withTransaction")).toThrow("readonly");
  expect(read(db)).toEqual([]);
});

test("a transaction inside a transaction is a savepoint: its failure undoes only its own rows", async () => {
  await clear();
  await withTransaction(db, async (tx) => {
    write(tx, "outer");
    await expect(
      withTransaction(db, (inner) => {
        write(inner, "inner");
        throw new Error("inner refused");
      }),
    ).rejects.toThrow("inner refused");
    await withTransaction(db, (inner) => write(inner, "inner kept"));
  });
  expect(read(db)).toEqual(["outer", "inner kept"]);
});

test("a body that does not await commits in its caller's turn of the event loop", async () => {
  await clear();
  const done = withTransaction(db, (tx) => write(tx, "at once"));
  // No await yet: the row is already committed, so the reader sees it.
  expect(read(db)).toEqual(["at once"]);
  await done;
});
