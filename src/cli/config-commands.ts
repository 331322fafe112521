import type { TObject } from "@sinclair/typebox";
import exampleConfiguration from "../../config.example.toml" with { type: "text" };
import { ConfigSchema } from "../config/config-schema";
import { configWarnings } from "../config/config-warnings";
import { type ExplainedConfig, loadExplainedConfig } from "../config/load-config";
import { redactPgUrl } from "../db/pg/connect";
import { checkFirstAdminSettings } from "../domain/users/bootstrap-admin";
import { readTlsFiles, TlsSetupError } from "../http/tls-front";
import { CommandFailure, type ParsedArgs } from "./args";

/** Keys whose values are secrets: shown as set or empty, never as themselves. */
const SECRET_KEYS = new Set(["admin.password", "metrics.token"]);
const MASK = "********";

/** A value as TOML writes it. */
function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(
      ([key, inner]) => `${/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key)} = ${tomlValue(inner)}`,
    );
    return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
  }
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * The effective configuration as TOML, each key with where its value came from (default, the file, or
 * the environment variable), secrets masked: it can be read, diffed, or saved as a starting file.
 */
export function describeConfig(explained: ExplainedConfig): string {
  const lines = [
    `# Effective configuration: defaults, then ${explained.file ?? "no config file"}, then BULWARK_* variables.`,
  ];
  for (const [section, schema] of Object.entries(ConfigSchema.properties) as [string, TObject][]) {
    lines.push("", `[${section}]`);
    const values = explained.config[section as keyof typeof explained.config] as Record<string, unknown>;
    for (const key of Object.keys(schema.properties)) {
      const path = `${section}.${key}`;
      const value = values[key];
      const isMasked = SECRET_KEYS.has(path) && value !== "";
      // A PostgreSQL URL may carry its password: the rest of it is shown.
      const shown = path === "database.url" ? redactPgUrl(value as string) : value;
      const source = explained.sources.get(path);
      const origin =
        source === undefined ? "default" : source === "file" ? `file ${explained.file}` : `env ${source}`;
      lines.push(
        `${key} = ${isMasked ? `"${MASK}"` : tomlValue(shown)}  # ${origin}${isMasked ? ", masked" : shown !== value ? ", password masked" : ""}`,
      );
    }
  }
  return lines.join("\n");
}

/**
 * `bulwark config check`: loads the configuration as `serve` would (file, environment, every rule,
 * the TLS files, the first admin's settings) and prints the effective values; a problem is one line
 * naming the key, exit code 1.
 */
export function configCheckCommand(args: ParsedArgs): void {
  const explained = loadExplainedConfig({ file: args.flags.get("config") });
  const { server, admin } = explained.config;
  checkFirstAdminSettings(admin);
  if (server.tls_cert !== "") {
    try {
      readTlsFiles(server.tls_cert, server.tls_key);
    } catch (error) {
      if (error instanceof TlsSetupError)
        throw new CommandFailure(`invalid config server.tls_cert: ${error.message}`);
      throw error;
    }
  }
  console.log(describeConfig(explained));
  console.log("");
  console.log("# The configuration is valid.");
  for (const warning of configWarnings(explained.config)) console.error(`bulwark: warning: ${warning}`);
}

/** `bulwark config example`: the annotated example configuration, every key with its default. */
export function configExampleCommand(): void {
  process.stdout.write(exampleConfiguration);
}
