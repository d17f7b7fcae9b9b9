/**
 * The benchmark harness's own logic, without running a benchmark: the statistics, the hot
 * partition arithmetic the README's Scaling section quotes, and the esbuild command taken from
 * CDK (a private CDK API: an upgrade that changes it must fail here, not in `npm run bench`).
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_BUNDLING } from '../../infra/bundling';
import { cdkEsbuildCommand } from '../../tools/bench/cold';
import { simulateHotStatus } from '../../tools/bench/scaling';
import { median, quantile } from '../../tools/stats';

describe('statistics', () => {
  it('takes medians and interpolated percentiles, whatever the order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([10, 0], 0.99)).toBeCloseTo(9.9);
  });
});

describe('status index hot partition', () => {
  it('caps one status at 1,000 creates/s and lifts the cap n-fold with n shards', () => {
    expect(simulateHotStatus(2_000, 1)).toEqual({ accepted: 1_000, throttled: 1_000 });
    expect(simulateHotStatus(5_000, 4).accepted).toBe(4_000);
    expect(simulateHotStatus(5_000, 10)).toEqual({ accepted: 5_000, throttled: 0 });
  });
});

describe("the esbuild command CDK runs, as the cold-start benchmark rebuilds it", () => {
  it('follows FUNCTION_BUNDLING: entry, format, minification, main fields, output file', () => {
    const args = cdkEsbuildCommand('functions/get-pet.ts', '/tmp/out');
    expect(args[0]).toBe('--bundle');
    expect(args[1]).toMatch(/functions\/get-pet\.ts$/);
    expect(args).toContain(`--format=${FUNCTION_BUNDLING.format}`);
    expect(args).toContain(`--target=${FUNCTION_BUNDLING.target}`);
    expect(args.includes('--minify')).toBe(FUNCTION_BUNDLING.minify);
    expect(args).toContain(`--main-fields=${FUNCTION_BUNDLING.mainFields.join(',')}`);
    expect(args).toContain('--outfile=/tmp/out/index.mjs');
  });
});
