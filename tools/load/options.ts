/**
 * The command line of `npm run load`, read and checked: what to load (an API at --url with its
 * keys, or a local server started here with --keys N on --plan NAME), how much, and how to report.
 * Every mistake is a UsageError of one line that never repeats a key.
 */
import * as z from 'zod/mini';
import { DEFAULT_PLAN, PLANS_FILE_VARIABLE, plansInForce, type Plans } from '../../shared/plans';
import { parseCommandLine, UsageError } from '../cli';
import { ROOMY_PLANS } from '../local-server/usage-plans';

export const LOAD_HELP = 'npm run load -- --help';

export const LOAD_USAGE = `Usage: npm run load [-- options]

Creates pets, then walks every page of GET /v1/pets (unfiltered and per status). The requests go
out with each key in turn; a 429 too_many_requests is sent again after its Retry-After (at most
8 times), a 429 quota_exceeded is not. The report counts both per key (by key id).

Options:
  --count N          pets to create (default 2000)
  --concurrency C    creates in flight (default 32)
  --keys N           keys to spread the requests over (default 1), registered on the local server
                     started here, each metered on its own usage key
  --plan NAME        the plan of those keys (default ${DEFAULT_PLAN})
  --url URL          an API to load (ending in /v1), with --key; default: a local server started here
  --key KEY          an API key for --url; repeat it to spread the requests over several keys
  --json             print the report as JSON
  --help             show this help

Environment:
  ${PLANS_FILE_VARIABLE}         JSON file of the plans the local server started here meters with
                     ({"plans": {"NAME": {"rateLimit", "burstLimit", "quota"?}}});
                     without it, roomy plans (the plans' names, at 10000/s, no quota), so that
                     a plan never shapes the figures

Exits 1 when a pet was lost or duplicated, or an answer was not 2xx in the end (a 429 sent again
until it succeeded is not a failure); 2 when the run cannot start: a bad option, no answer at
--url, or a --key refused.
`;

/** The API the run loads: one at --url with the keys given, or a local server of its own. */
export type LoadTarget =
  | { readonly kind: 'url'; readonly url: string; readonly keys: readonly string[] }
  | { readonly kind: 'local'; readonly keys: number; readonly plan: string; readonly plans: Plans };

export interface LoadCommand {
  readonly count: number;
  readonly concurrency: number;
  readonly json: boolean;
  readonly target: LoadTarget;
}

/** The most keys a local run registers: each is a keys-table item and an authorizer cache entry. */
export const MAX_LOCAL_KEYS = 1_000;

const PositiveInteger = z.coerce.number().check(z.int(), z.positive());

const positiveInteger = (name: string, value: string, max: number) => {
  const parsed = PositiveInteger.safeParse(value);
  if (!parsed.success || parsed.data > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}: see ${LOAD_HELP}`);
  return parsed.data;
};

const httpUrl = (value: string): string => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  // What the client refuses: a query or fragment would be lost, credentials sent to the wrong place.
  if ((url?.protocol !== 'http:' && url?.protocol !== 'https:') || url.search || url.hash || url.username || url.password)
    throw new UsageError(`--url must be an http or https URL ending in /v1, without credentials, query or fragment: see ${LOAD_HELP}`);
  return value.replace(/\/+$/, '');
};

/** The plans the local server started here meters with: PLANS_FILE's when it is set, else roomy ones. */
const localPlans = (env: Readonly<Record<string, string | undefined>>): Plans => {
  if (!env[PLANS_FILE_VARIABLE]) return ROOMY_PLANS;
  try {
    return plansInForce(env);
  } catch (error) {
    throw new UsageError(`${(error as Error).message} See ${LOAD_HELP}`);
  }
};

/** The command line `args` (after `--`), read against `env`; undefined when it asks for the help. */
export const parseLoadCommand = (
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): LoadCommand | undefined => {
  const { values } = parseCommandLine(
    {
      args: [...args],
      options: {
        count: { type: 'string', default: '2000' },
        concurrency: { type: 'string', default: '32' },
        keys: { type: 'string' },
        plan: { type: 'string' },
        url: { type: 'string' },
        key: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    },
    LOAD_HELP,
  );
  if (values.help) return undefined;
  const count = positiveInteger('count', values.count, 1_000_000);
  const concurrency = positiveInteger('concurrency', values.concurrency, 1_000_000);
  const common = { count, concurrency, json: values.json };

  if ((values.url === undefined) !== (values.key === undefined)) throw new UsageError(`--url and --key go together: see ${LOAD_HELP}`);
  if (values.url !== undefined && values.key !== undefined) {
    // A deployed key's plan is the key tool's to set; how many keys, the --key options say.
    if (values.keys !== undefined || values.plan !== undefined) {
      throw new UsageError(
        `--keys and --plan are for the local server started here; with --url, repeat --key (a key's plan is set with npm run keys -- set-plan): see ${LOAD_HELP}`,
      );
    }
    if (new Set(values.key).size !== values.key.length) throw new UsageError(`the same --key is given twice: see ${LOAD_HELP}`);
    return { ...common, target: { kind: 'url', url: httpUrl(values.url), keys: values.key } };
  }

  const keys = values.keys === undefined ? 1 : positiveInteger('keys', values.keys, MAX_LOCAL_KEYS);
  const plans = localPlans(env);
  const plan = values.plan ?? DEFAULT_PLAN;
  if (!Object.hasOwn(plans, plan)) {
    const where = env[PLANS_FILE_VARIABLE] ? `the plans of ${PLANS_FILE_VARIABLE}` : 'the plans';
    throw new UsageError(`--plan: unknown plan '${plan}': ${where} are ${Object.keys(plans).join(', ')}.`);
  }
  return { ...common, target: { kind: 'local', keys, plan, plans } };
};
