/**
 * System tools some tests drive, installed with apt-get when missing (as root, or through sudo -n), so
 * that `npm test` on a fresh Debian or Ubuntu machine needs nothing done by hand. A test never skips
 * because a tool is missing: if it cannot be installed, `npm test` stops here and says why.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";

const TOOLS = [
  { command: "chromium", package: "chromium", use: "WebAuthn tests (Chromium's virtual authenticator)" },
  { command: "zbarimg", package: "zbar-tools", use: "reading the TOTP QR code back" },
  { command: "openssl", package: "openssl", use: "certificates: the SAML IdP's, CSRs, openssl verify" },
  { command: "wg", package: "wireguard-tools", use: "checking WireGuard keys and configurations" },
  { command: "wireguard-go", package: "wireguard-go", use: "bringing a real WireGuard tunnel up" },
  { command: "ip", package: "iproute2", use: "addressing the test tunnel's interfaces and namespaces" },
  { command: "nft", package: "nftables", use: "the VPN server's rules that keep organizations apart" },
  { command: "ping", package: "iputils-ping", use: "pinging across the test tunnels" },
  {
    command: "faketime",
    package: "faketime",
    use: "running the agent a year on, when its credentials are due",
  },
  { command: "socat", package: "socat", use: "relaying the API into a device's network namespace" },
  { command: "curl", package: "curl", use: "a TLS client presenting a device certificate" },
  {
    command: "haproxy",
    package: "haproxy",
    use: "the reverse-proxy example forwarding Client-Cert, and the replicas pass behind deploy/haproxy-replicas.cfg",
  },
  { command: "promtool", package: "prometheus", use: "checking the /metrics scrape with promtool" },
  { command: "systemd-analyze", package: "systemd", use: "verifying and rating deploy/bulwark.service" },
  { command: "nginx", package: "nginx", use: "the nginx example in front of the executable" },
  { command: "readelf", package: "binutils", use: "checking the musl executable's loader and libraries" },
  { command: "wine", package: "wine", use: "running the Windows agent (Debian 12's Wine 8.0)" },
  {
    command: "llvm-objdump",
    package: "llvm",
    use: "reading the macOS executables' Mach-O headers (test/binary/macos-build.test.ts)",
  },
  {
    command: "python3",
    package: "python3-minimal",
    use: "checking the macOS executables' code-signature page hashes apart from the re-signer",
  },
  { command: "shasum", package: "perl", use: "the console's macOS download command, as a Mac runs it" },
  {
    command: "x86_64-w64-mingw32-ld",
    package: "binutils-mingw-w64-x86-64",
    use: "linking the DLL Wine 8.0 lacks for the Windows agent (test/helpers/wine.ts)",
  },
] as const;

export function ensureTestTools(): void {
  ensureApt(TOOLS);
  ensureUsbguardRuleParser();
  ensurePostgresql();
}

/**
 * The folder of PostgreSQL's server programs (initdb, pg_ctl, postgres, psql), which the PostgreSQL tests
 * start a throwaway cluster with. Debian's `postgresql` package puts them in /usr/lib/postgresql/<major>/bin,
 * off PATH: the newest major installed there, else the folder of an `initdb` on PATH (other systems).
 * Installs the package when neither is found. Returns the folder.
 */
export function ensurePostgresql(): string {
  const found = postgresqlBinFolder();
  if (found) return found;
  ensureApt([
    { command: "", package: "postgresql", use: "the PostgreSQL store's tests (initdb, pg_ctl, psql)" },
  ]);
  const installed = postgresqlBinFolder();
  if (!installed)
    throw new Error("apt-get installed postgresql, but no initdb is in /usr/lib/postgresql/*/bin");
  return installed;
}

function postgresqlBinFolder(): string | null {
  const debian = "/usr/lib/postgresql";
  const majors = existsSync(debian)
    ? readdirSync(debian)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(debian, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] !== undefined) return join(debian, majors[0], "bin");
  const onPath = Bun.which("initdb");
  return onPath ? dirname(realpathSync(onPath)) : null;
}

/**
 * usbguard-rule-parser, usbguard's own reader of rule files, which checks the agent's usbguard rules.
 * Installing the usbguard package would start its daemon, which then blocks every USB device plugged in
 * later on the machine running the tests: only its library (libusbguard1) is installed, and the parser
 * is unpacked from the downloaded package into test-results/tools/. Returns the parser's path.
 */
export function ensureUsbguardRuleParser(): string {
  const onPath = Bun.which("usbguard-rule-parser");
  if (onPath) return onPath;
  const folder = join(import.meta.dir, "..", "test-results", "tools", "usbguard");
  const parser = join(folder, "usr", "bin", "usbguard-rule-parser");
  if (!existsSync(parser)) {
    mkdirSync(folder, { recursive: true });
    const download = Bun.spawnSync(["apt-get", "download", "usbguard"], {
      cwd: folder,
      stdout: "inherit",
      stderr: "inherit",
    });
    const archive = readdirSync(folder).find((name) => name.startsWith("usbguard_") && name.endsWith(".deb"));
    if (download.exitCode !== 0 || archive === undefined)
      throw new Error(
        "apt-get download usbguard failed (usbguard-rule-parser checks the agent's usbguard rules)",
      );
    Bun.spawnSync(["dpkg-deb", "-x", join(folder, archive), folder]);
  }
  if (Bun.spawnSync([parser, "--help"]).exitCode !== 0)
    ensureApt([{ command: "", package: "libusbguard1", use: "the library usbguard-rule-parser runs on" }]);
  if (Bun.spawnSync([parser, "--help"]).exitCode !== 0)
    throw new Error(`${parser} does not run (is libusbguard1 installed?)`);
  return parser;
}

/** Installs with apt-get the packages of the tools that are missing (a tool without a command: always). */
function ensureApt(tools: readonly { command: string; package: string; use: string }[]): void {
  const missing = tools.filter((tool) => tool.command === "" || !Bun.which(tool.command));
  if (missing.length === 0) return;
  const packages = missing.map((tool) => tool.package);
  const sudo = process.getuid?.() === 0 ? [] : Bun.which("sudo") ? ["sudo", "-n"] : null;
  if (!sudo || !Bun.which("apt-get"))
    throw new Error(
      `missing ${missing.map((tool) => `${tool.command} (${tool.use})`).join(", ")}: install the packages ${packages.join(" ")}`,
    );
  console.log(
    `installing ${packages.join(" ")} with apt-get, for ${missing.map((tool) => tool.use).join(" and ")}`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = (args: string[]) =>
    Bun.spawnSync([...sudo, ...args], { env, stdout: "inherit", stderr: "inherit" }).exitCode === 0;
  // apt can find its lock held by a daily job for a moment: one more try after a pause.
  for (let attempt = 1; attempt <= 2; attempt++) {
    // A failing update (one unsigned or unreachable source) must not stop an install the other sources serve.
    run(["apt-get", "update", "-qq"]);
    if (run(["apt-get", "install", "-y", "-qq", ...packages])) break;
    if (attempt === 1) Bun.sleepSync(10_000);
  }
  const stillMissing = missing.filter((tool) => tool.command !== "" && !Bun.which(tool.command));
  if (stillMissing.length > 0)
    throw new Error(`apt-get could not install ${stillMissing.map((tool) => tool.package).join(" ")}`);
}
