export const HELP_TEXT = `Bulwark: device and security-policy management

Usage: bulwark <command> [--config FILE]

Commands:
  serve                      migrate the database, then serve the API (creates the first admin on first run)
  migrate                    apply pending database migrations and exit
  admin create --email E --password P [--name N] [--org ORG_NAME]
                             create an admin user (and the organization if it does not exist)
  backup FILE                write a consistent copy of the live database to FILE
  version                    print the version
  help                       print this help

Configuration: --config FILE, else ./bulwark.toml if present; every key can be overridden with
BULWARK_<SECTION>_<KEY> (e.g. BULWARK_SERVER_PORT=9000). See config.example.toml.`;
