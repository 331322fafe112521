/** A PostgreSQL URL as messages and `config check` may show it: its password replaced by `***`. */
export function redactPgUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*):[^@/]*@/, "$1:***@");
}
