/** Usage plans: the module's own plans are valid, and PLANS_FILE replaces them or fails with one line. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Plans, plans, plansInForce, regionalPlans } from '../../shared/plans';

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

describe('regionalPlans: the plans as each region of a stage in several regions meters them', () => {
  const fixture: Plans = {
    default: { rateLimit: 7, burstLimit: 9, quota: { limit: 100, period: 'DAY' } },
    unmetered: { rateLimit: 3, burstLimit: 4 },
    monthly: { rateLimit: 1, burstLimit: 1, quota: { limit: 5, period: 'MONTH' } },
  };

  it('are the plans as they are in one region', () => {
    expect(regionalPlans(fixture, 1)).toEqual(fixture);
  });

  it.each([2, 3, 5])(
    "keep each plan's rate, burst and period, and give %i regions an even share of each quota, rounded down",
    (regionCount) => {
      const regional = regionalPlans(fixture, regionCount);
      expect(Object.keys(regional)).toEqual(Object.keys(fixture));
      for (const [name, plan] of Object.entries(fixture)) {
        const inRegion = regional[name]!;
        expect({ rateLimit: inRegion.rateLimit, burstLimit: inRegion.burstLimit, period: inRegion.quota?.period }).toEqual({
          rateLimit: plan.rateLimit,
          burstLimit: plan.burstLimit,
          period: plan.quota?.period,
        });
        if (plan.quota === undefined) continue;
        const share = inRegion.quota!.limit;
        // A client that uses every region gets at most the plan's quota, and loses less than a request a region.
        expect(share * regionCount).toBeLessThanOrEqual(plan.quota.limit);
        expect(plan.quota.limit - share * regionCount).toBeLessThan(regionCount);
        expect(Plans.safeParse(regional).success).toBe(true);
      }
    },
  );

  it('refuses, naming the plan, a quota that would split below one request a region', () => {
    expect(() => regionalPlans(fixture, 6)).toThrow(
      "plan 'monthly': its quota of 5 a month splits to less than 1 request in each of 6 regions: raise the quota to 6 or more.",
    );
  });

  it('refuses a count of regions that is not one or more', () => {
    for (const count of [0, -1, 1.5, Number.NaN]) expect(() => regionalPlans(fixture, count)).toThrow(/A stage runs in 1 region or more/);
  });
});
