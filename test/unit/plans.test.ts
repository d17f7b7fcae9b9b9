/** Usage plans: the module's own plans are valid, and PLANS_FILE replaces them or fails with one line. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Plans, plans, plansInForce } from '../../shared/plans';

const file = (content: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'plans-')), 'plans.json');
  writeFileSync(path, content);
  return path;
};

describe('plans', () => {
  it('are valid, with a default plan and a larger one', () => {
    expect(Plans.safeParse(plans).success).toBe(true);
    expect(plans.partner!.rateLimit).toBeGreaterThan(plans.default!.rateLimit);
  });

  it('are the module’s own without PLANS_FILE', () => {
    expect(plansInForce({})).toBe(plans);
  });

  it('are those of PLANS_FILE when it is set', () => {
    const path = file(
      JSON.stringify({
        plans: { default: { rateLimit: 5, burstLimit: 5, quota: { limit: 100, period: 'DAY' } }, tiny: { rateLimit: 1, burstLimit: 1 } },
      }),
    );
    expect(plansInForce({ PLANS_FILE: path })).toEqual({
      default: { rateLimit: 5, burstLimit: 5, quota: { limit: 100, period: 'DAY' } },
      tiny: { rateLimit: 1, burstLimit: 1 },
    });
  });

  it.each([
    ['a file that does not exist', undefined, /cannot read/],
    ['a file that is not JSON', '{', /is not JSON/],
    ['no default plan', JSON.stringify({ plans: { tiny: { rateLimit: 1, burstLimit: 1 } } }), /'default' plan/],
    [
      'a quota period API Gateway does not have',
      JSON.stringify({ plans: { default: { rateLimit: 1, burstLimit: 1, quota: { limit: 1, period: 'YEAR' } } } }),
      /plans\.default\.quota\.period/,
    ],
    ['an unknown field', JSON.stringify({ plans: { default: { rateLimit: 1, burstLimit: 1, rate: 2 } } }), /plans\.default/],
  ])('refuse %s in one line', (_, content, message) => {
    const path = content === undefined ? join(tmpdir(), 'no-such-plans.json') : file(content);
    expect(() => plansInForce({ PLANS_FILE: path })).toThrow(message);
    try {
      plansInForce({ PLANS_FILE: path });
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });
});
