// The device agent never loads the server's modules (database, HTTP, domain): its commands have their
// own runner, imported only when asked for (the bundle evaluates a dynamic import when it runs).
const argv = process.argv.slice(2);
const code =
  argv[0] === "agent"
    ? await (await import("./cli/run-agent-cli")).runAgentCli(argv)
    : await (await import("./cli/run-cli")).runCli(argv);
if (code !== 0) process.exit(code);

export {};
