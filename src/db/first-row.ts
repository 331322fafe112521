/**
 * The first row a query gives, or undefined: what Drizzle's SQLite `.get()` returns, written so that it
 * works on a query of either store (a Drizzle query is a promise of its rows on both). For a select
 * that finds one row, by key or with `.limit(1)`.
 */
export async function firstRow<T>(query: PromiseLike<T[]>): Promise<T | undefined> {
  return (await query)[0];
}
