/**
 * `npm start`'s settings, from its environment: each checked before anything starts, and a wrong
 * one refused as a UsageError of one line that names it and what it must be, never its value
 * (API_KEY is a secret).
 */
import { z } from 'zod';
import { API_KEY_PATTERN } from '../../shared/api-keys';
import { HEALTH_REUSE_SECONDS } from '../../shared/database-health';
import { REGION_COUNT, REGION_INDEX_VARIABLE } from '../../shared/ids';
import { plansInForce, regionalPlans, type Plans } from '../../shared/plans';
import { MAX_STATUS_SHARDS, STATUS_SHARDS_VARIABLE } from '../../shared/tables';
import { UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT } from '../dynamodb-local';
import { DEFAULT_AUTH_CACHE_TTL_SECONDS, DEFAULT_THROTTLE } from './gateway';
import { BODY_TIMEOUT_SECONDS } from './server';

/** The command that shows npm start's usage, which each refusal points at. */
export const HELP = 'npm start -- --help';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
const PORT_EXPECTED = 'must be a port number from 0 to 65535 (0 picks a free one)';
const BODY_TIMEOUT_MAX_SECONDS = 120;
/** A health answer older than this would hide a database that went down: a monitor polls more often. */
const HEALTH_REUSE_MAX_SECONDS = 60;

const Settings = z.object({
  PORT: port(3000),
  API_KEY: z.string().regex(API_KEY_PATTERN).optional(),
  DYNAMODB_ENDPOINT: z.url().optional(),
  DYNAMODB_LOCAL_PORT: port(DEFAULT_DYNAMODB_LOCAL_PORT),
  AUTH_CACHE_TTL: z.coerce.number().int().min(0).max(3600).default(DEFAULT_AUTH_CACHE_TTL_SECONDS),
  HEALTH_REUSE_SECONDS: z.coerce.number().int().min(0).max(HEALTH_REUSE_MAX_SECONDS).default(HEALTH_REUSE_SECONDS),
  THROTTLE_RATE: z.coerce.number().positive().default(DEFAULT_THROTTLE.rate),
  THROTTLE_BURST: z.coerce.number().int().positive().default(DEFAULT_THROTTLE.burst),
  // Below Node's own limit on receiving a whole request (300 s), which answers with no access line.
  BODY_TIMEOUT: z.coerce.number().positive().max(BODY_TIMEOUT_MAX_SECONDS).default(BODY_TIMEOUT_SECONDS),
  STAGE_REGION_COUNT: z.coerce.number().int().min(1).max(REGION_COUNT).default(1),
  // The functions read it themselves (shared/config.ts); checked here to be refused in one line.
  [STATUS_SHARDS_VARIABLE]: z.coerce.number().int().min(1).max(MAX_STATUS_SHARDS).default(1),
  // The create function reads it itself (shared/ids.ts); checked here to be refused in one line.
  [REGION_INDEX_VARIABLE]: z.coerce
    .number()
    .int()
    .min(0)
    .max(REGION_COUNT - 1)
    .default(0),
});
export type Settings = z.infer<typeof Settings>;

/** What each setting must be, in the words of the one-line refusal (never the value: API_KEY is a secret). */
const EXPECTED: Record<keyof Settings, string> = {
  PORT: PORT_EXPECTED,
  API_KEY: 'must be a URL-safe string (A-Z a-z 0-9 . _ ~ -) of 20 to 512 characters',
  DYNAMODB_ENDPOINT: 'must be a URL such as http://127.0.0.1:8000',
  DYNAMODB_LOCAL_PORT: PORT_EXPECTED,
  AUTH_CACHE_TTL: 'must be a whole number of seconds from 0 to 3600',
  HEALTH_REUSE_SECONDS: `must be a whole number of seconds from 0 to ${HEALTH_REUSE_MAX_SECONDS}`,
  THROTTLE_RATE: 'must be a number of requests per second above 0',
  THROTTLE_BURST: 'must be a whole number of requests above 0',
  BODY_TIMEOUT: `must be a number of seconds above 0, at most ${BODY_TIMEOUT_MAX_SECONDS}`,
  STAGE_REGION_COUNT: `must be a whole number of regions from 1 to ${REGION_COUNT}`,
  [STATUS_SHARDS_VARIABLE]: `must be a whole number from 1 to ${MAX_STATUS_SHARDS}`,
  [REGION_INDEX_VARIABLE]: `must be a whole number from 0 to ${REGION_COUNT - 1}`,
};

const readSettings = (env: NodeJS.ProcessEnv): Settings => {
  const parsed = Settings.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (parsed.success) return parsed.data;
  const name = parsed.error.issues[0]?.path[0] as keyof Settings;
  throw new UsageError(`${name} ${EXPECTED[name]}: see ${HELP}`);
};

/**
 * The usage plans in force, as one region of the stage meters them (STAGE_REGION_COUNT); a
 * PLANS_FILE that cannot be used, or a quota that would split below one request, is a setting
 * refused in one line.
 */
const planSettings = (env: NodeJS.ProcessEnv, regionCount: number): Plans => {
  try {
    return regionalPlans(plansInForce(env), regionCount);
  } catch (error) {
    throw new UsageError(`${(error as Error).message.replace(/\.$/, '')}: see ${HELP}`);
  }
};

/**
 * Everything npm start reads from its environment before it starts anything: its settings, and the
 * plans as one region of its stage meters them (the server meters each key on these as they are).
 */
export const startSettings = (env: NodeJS.ProcessEnv): { readonly settings: Settings; readonly plans: Plans } => {
  const settings = readSettings(env);
  return { settings, plans: planSettings(env, settings.STAGE_REGION_COUNT) };
};
