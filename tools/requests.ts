/** Small helpers for clients of the API: the load tool, the smoke test and the tests share them. */

/** How long a tool waits for one answer before it gives up on it. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Why fetch got no answer, in a word or two (ECONNREFUSED, ENOTFOUND, a timeout of `timeoutMs`). */
export const noAnswerReason = (error: unknown, timeoutMs = REQUEST_TIMEOUT_MS): string => {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
};

/** Runs `count` calls of `task` with at most `concurrency` in flight; results keep their order. */
export const inParallel = async <T>(count: number, concurrency: number, task: (index: number) => Promise<T>) => {
  const results: T[] = new Array(count);
  let nextIndex = 0;
  const worker = async () => {
    while (nextIndex < count) {
      const index = nextIndex++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
};

/** The URL of a `Link` header's entry with this rel (RFC 8288), if any. */
export const linkOf = (response: Pick<Response, 'headers'>, rel: string): string | undefined => {
  const header = response.headers.get('link') ?? '';
  return new RegExp(`<([^>]+)>;\\s*rel="${rel}"`).exec(header)?.[1];
};
