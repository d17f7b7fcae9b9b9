/**
 * `npm run keys -- usage KEY_ID [--days N] [--json]`: a key's requests per day over the last N
 * days (today included, UTC days as API Gateway counts them), and what remains of its plan's
 * quota this period. On a stage it reads API Gateway's usage (GetUsage); locally the local
 * server's usage table. A stage in several regions meters a key in each region, each on its share
 * of the quota: the report is their sum, with a column and a remaining line per region.
 */
import { meteringOf } from '../../shared/plan-policy';
import { UsageError } from '../cli';
import { usageDay } from '../local-server/usage-plans';
import { noSuchKey, unmeteredKey, type CommandContext } from './commands';
import { attributeText } from './output';
import { daysFrom, type QuotaUse, type UsageReport } from './usage-keys';

export const DEFAULT_USAGE_DAYS = 7;
/** The most days asked at once: 90, about a quarter, as the usage of a usage plan is kept for months. */
export const MAX_USAGE_DAYS = 90;

/** --days: a whole number of days from 1 to MAX_USAGE_DAYS (not echoed: it may be anything). */
export const usageDaysArgument = (value: string | undefined): number => {
  if (value === undefined) return DEFAULT_USAGE_DAYS;
  const days = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(days >= 1 && days <= MAX_USAGE_DAYS)) throw new UsageError(`--days takes a whole number of days from 1 to ${MAX_USAGE_DAYS}.`);
  return days;
};

const DAY_MS = 86_400_000;

const remainingText = (quota: QuotaUse | undefined): string =>
  quota === undefined ? 'no quota' : `${quota.remaining} of ${quota.limit} this ${quota.period}`;

/**
 * The text lines of a report: a table of days, then what remains of the quota; in a stage of
 * several regions, the sum and each region's column, then each region's remaining share.
 */
const usageLines = (report: UsageReport, planName: string): string[] => {
  const plan = attributeText(planName);
  const width = 'YYYY-MM-DD'.length + 2;
  const { quota, regions = [] } = report;
  const columns = regions.map(({ region }) => Math.max(region.length, 'requests'.length) + 2);
  const cell = (text: string | number, column: number) => String(text).padEnd(column);
  const total = 'requests'.length + 2;
  const row = (first: string, sum: string | number, each: ReadonlyArray<string | number>) =>
    `${first.padEnd(width)}${each.length === 0 ? sum : cell(sum, total) + each.map((text, index) => cell(text, columns[index] ?? 0)).join('')}`.trimEnd();
  return [
    row(
      'day',
      'requests',
      regions.map(({ region }) => region),
    ),
    ...report.days.map(({ day, requests }, index) =>
      row(
        day,
        requests,
        regions.map((region) => region.days[index]?.requests ?? 0),
      ),
    ),
    `remaining: ${remainingText(quota)} (plan ${plan})${regions.length === 0 ? '' : ', every region together'}`,
    ...regions.map(({ region, quota: share }) => `  in ${region}: ${remainingText(share)}`),
  ];
};

export const showUsage = async ({ keys, usageKeys, print, json }: CommandContext, keyId: string, days: number): Promise<number> => {
  const record = await keys.findById(keyId);
  if (!record) throw noSuchKey(keyId);
  const metering = meteringOf(record);
  if ('refused' in metering) throw unmeteredKey(keyId, metering.refused, 'be metered');
  const now = Date.now();
  const report = await usageKeys.usage(metering, daysFrom(usageDay(now - (days - 1) * DAY_MS), usageDay(now)));
  if (json) {
    const regions = report.regions?.map(({ region, days: each, quota }) => ({ region, days: each, quota: quota ?? null }));
    print(
      JSON.stringify({ id: keyId, plan: metering.plan, days: report.days, quota: report.quota ?? null, ...(regions ? { regions } : {}) }),
    );
  } else for (const line of usageLines(report, metering.plan)) print(line);
  return 0;
};
