import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { isIP } from "../lib/ip-version";

/** What the TLS front knows about a client connection, for the request handler. */
export interface TlsClient {
  /** The client's address (the handler itself only sees the front's loopback connection). */
  ip: string;
  /** The client certificate's DER bytes, when the client presented one in the handshake. */
  certificate: Uint8Array | null;
}

/** The address the front connects from; with the HTTP server's own address and port it makes the connection unique. */
const FRONT_ADDRESS = "127.0.0.1";

/**
 * The client behind each loopback connection from the front to the HTTP server, by the connection's
 * source port: what the HTTP server sees as the peer (`server.requestIP(request)`). Only a peer at
 * 127.0.0.1 matches: while the front's connection is open, no other socket can connect to the HTTP
 * server from 127.0.0.1 and that port (TCP keeps the pair of endpoints unique), whereas another local
 * process could use the same port number from 127.0.0.2.
 */
export class TlsClients {
  readonly #byPort = new Map<number, TlsClient>();

  get(peer: { address: string; port: number } | null | undefined): TlsClient | undefined {
    if (!peer || (peer.address !== FRONT_ADDRESS && peer.address !== `::ffff:${FRONT_ADDRESS}`))
      return undefined;
    return this.#byPort.get(peer.port);
  }

  set(port: number, client: TlsClient): void {
    this.#byPort.set(port, client);
  }

  delete(port: number): void {
    this.#byPort.delete(port);
  }

  get size(): number {
    return this.#byPort.size;
  }
}

export interface TlsFrontOptions {
  hostname: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** The loopback port of the HTTP server the front hands each connection to. */
  upstreamPort: number;
  clients: TlsClients;
}

export interface TlsFront {
  port: number;
  /** Reads the certificate and key files again (after a renewal), for new connections. */
  reload(): void;
  stop(): Promise<void>;
}

/** Raised when the TLS files cannot be used; the message names the config key. */
export class TlsSetupError extends Error {}

/**
 * Terminates TLS with node:tls and hands each connection to the HTTP server over loopback. Bun.serve
 * (so Elysia) never shows a handler the client's certificate (Bun issue 14097), and node:https under
 * Bun neither; node:tls does. The front asks for a client certificate without requiring one (an
 * agent's device certificate; anything else still gets its bearer token checked), records the
 * certificate and the client's address under the loopback connection's port before a byte of the
 * request is forwarded, and forgets them when the connection closes. It verifies nothing about the
 * certificate beyond the handshake's proof that the client holds its private key: the app recognises
 * only certificates it issued and did not revoke.
 */
export async function startTlsFront(options: TlsFrontOptions): Promise<TlsFront> {
  // Loaded here, not at import: node:tls and node:net took ~5 ms of every start, TLS or not.
  const tls = process.getBuiltinModule("node:tls");
  const net = process.getBuiltinModule("node:net");
  const server = tls.createServer({
    ...readTlsFiles(options.certFile, options.keyFile),
    requestCert: true,
    rejectUnauthorized: false,
    ALPNProtocols: ["http/1.1"],
    handshakeTimeout: 10_000,
    minVersion: "TLSv1.2",
  });
  const open = new Set<Socket>();
  server.on("secureConnection", (client: TLSSocket) => {
    open.add(client);
    client.pause();
    const peer = client.getPeerCertificate(true);
    const certificate = peer?.raw ? new Uint8Array(peer.raw) : null;
    const ip = normalizeAddress(client.remoteAddress ?? "127.0.0.1");
    const upstream = net.connect({
      host: "127.0.0.1",
      port: options.upstreamPort,
      localAddress: FRONT_ADDRESS,
    });
    let localPort: number | undefined;
    upstream.on("connect", () => {
      localPort = upstream.localPort;
      if (localPort !== undefined) options.clients.set(localPort, { ip, certificate });
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    const close = () => {
      if (localPort !== undefined) options.clients.delete(localPort);
      upstream.destroy();
      client.destroy();
      open.delete(client);
    };
    upstream.on("close", close);
    upstream.on("error", close);
    client.on("close", close);
    client.on("error", close);
  });
  // A client that fails the handshake (plain HTTP on the HTTPS port, an old TLS version) is dropped.
  server.on("tlsClientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: options.hostname, port: options.port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : options.port,
    reload() {
      server.setSecureContext(readTlsFiles(options.certFile, options.keyFile));
    },
    stop() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      });
    },
  };
}

/** The certificate chain and key, checked to form a usable pair; errors name the config keys. */
export function readTlsFiles(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (key: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (error) {
      const code = (error as { code?: string }).code;
      const cause =
        code === "ENOENT"
          ? "no such file"
          : code === "EACCES"
            ? "permission denied"
            : (error as Error).message;
      throw new TlsSetupError(`cannot read ${key} ${path}: ${cause}`);
    }
  };
  const files = { cert: read("server.tls_cert", certFile), key: read("server.tls_key", keyFile) };
  try {
    process.getBuiltinModule("node:tls").createSecureContext(files);
  } catch (error) {
    throw new TlsSetupError(
      `server.tls_cert and server.tls_key are not a PEM certificate and its private key: ${(error as Error).message}`,
    );
  }
  return files;
}

/** An IPv4 client seen on a dual-stack socket (::ffff:203.0.113.7) is reported as plain IPv4. */
function normalizeAddress(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
