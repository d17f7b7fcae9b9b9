/** Metrics cost nothing when switched off, the way the local server runs. */
import { afterEach, describe, expect, it } from 'vitest';
import { requestMetrics } from '../../shared/http/request-metrics';

const saved = process.env.POWERTOOLS_METRICS_DISABLED;
afterEach(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = saved;
});

describe('requestMetrics', () => {
  it('adds no middleware when POWERTOOLS_METRICS_DISABLED is true', () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    expect(requestMetrics('listPets')).toEqual([]);
  });

  it('adds one middleware that writes after the answer and after an error when metrics are on', () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const middlewares = requestMetrics('listPets');
    expect(middlewares).toHaveLength(1);
    expect(Object.keys(middlewares[0] ?? {}).sort()).toEqual(['after', 'onError']);
  });
});
