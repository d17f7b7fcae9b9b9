/**
 * `npm run keys -- usage KEY_ID [--days N] [--json]`: a key's requests per day over the last N
 * days (today included, UTC days as API Gateway counts them), and what remains of its plan's
 * quota this period. On a stage it reads API Gateway's usage (GetUsage); locally the local
 * server's usage table.
 */
import { meteringOf } from '../../shared/plan-policy';
import { UsageError } from '../cli';
import { usageDay } from '../local-server/usage-plans';
import { noSuchKey, unmeteredKey, type CommandContext } from './commands';
import { attributeText } from './output';
import { daysFrom, type UsageReport } from './usage-keys';

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

/** The text lines of a report: a table of days, then what remains of the quota. */
const usageLines = (report: UsageReport, planName: string): string[] => {
  const plan = attributeText(planName);
  const width = 'YYYY-MM-DD'.length + 2;
  const { quota } = report;
  return [
    `${'day'.padEnd(width)}requests`,
    ...report.days.map(({ day, requests }) => `${day.padEnd(width)}${requests}`),
    quota === undefined
      ? `remaining: no quota (plan ${plan})`
      : `remaining: ${quota.remaining} of ${quota.limit} this ${quota.period} (plan ${plan})`,
  ];
};

export const showUsage = async ({ keys, usageKeys, print, json }: CommandContext, keyId: string, days: number): Promise<number> => {
  const record = await keys.findById(keyId);
  if (!record) throw noSuchKey(keyId);
  const metering = meteringOf(record);
  if ('refused' in metering) throw unmeteredKey(keyId, metering.refused, 'be metered');
  const now = Date.now();
  const report = await usageKeys.usage(metering, daysFrom(usageDay(now - (days - 1) * DAY_MS), usageDay(now)));
  if (json) print(JSON.stringify({ id: keyId, plan: metering.plan, days: report.days, quota: report.quota ?? null }));
  else for (const line of usageLines(report, metering.plan)) print(line);
  return 0;
};
