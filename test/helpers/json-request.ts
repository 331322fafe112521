/** A JSON request to a server at `origin`, as a script would send it; the answer's status, headers and body. */
export async function jsonRequest(
  origin: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answers' fields as they need them
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: {
      accept: "application/json",
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}
