/** Order statistics for repeated measurements: medians, not means, so one noisy run moves nothing. */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return (sorted[below] ?? 0) + ((sorted[above] ?? 0) - (sorted[below] ?? 0)) * (position - below);
};

export const median = (values: readonly number[]) => quantile(values, 0.5);

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** Fisher-Yates: each round visits the candidates in a new order, so drifting noise hits all alike. */
export const shuffled = <T>(items: readonly T[]): T[] => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
};
