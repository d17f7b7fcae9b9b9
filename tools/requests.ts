/** Small helpers for clients of the API: the load tool and the tests share them. */

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
export const linkOf = (response: Response, rel: string): string | undefined => {
  const header = response.headers.get('link') ?? '';
  return new RegExp(`<([^>]+)>;\\s*rel="${rel}"`).exec(header)?.[1];
};
