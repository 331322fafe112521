/**
 * A TCP relay on 127.0.0.1 in front of a server, which can be frozen: a network partition as a client of
 * the server sees it. While frozen nothing passes either way (the bytes wait in the sockets' buffers) and
 * new connections are accepted but not forwarded; once thawed everything held passes, in order, and the
 * connections accepted meanwhile are forwarded.
 */
import { connect, createServer, type Socket } from "node:net";

export interface TcpRelay {
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpRelay> {
  let isFrozen = false;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const held: Socket[] = [];
  const forward = (client: Socket) => {
    if (client.destroyed) return;
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    for (const socket of [client, upstream]) socket.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = createServer((client) => {
    if (!isFrozen) return forward(client);
    client.pause();
    client.on("error", () => client.destroy());
    held.push(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("the relay has no port");
  return {
    port: address.port,
    freeze() {
      isFrozen = true;
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      isFrozen = false;
      for (const { client, upstream } of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
      }
      for (const client of held.splice(0)) forward(client);
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      for (const client of held.splice(0)) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
