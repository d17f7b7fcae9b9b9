/**
 * The command line of `npm run smoke`, read and checked: which deployment (--url, or --stage's
 * ApiUrl output), with which key (--key or PETSTORE_API_KEY), whether it may create a pet, and
 * how to report. Every mistake is a UsageError of one line that never repeats the key.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { stageSettings } from '../../infra/stages';
import { BASE_PATH } from '../../shared/routes';
import { stackName, stackOutputs } from '../../shared/stack';
import { parseCommandLine, UsageError } from '../cli';
import { REQUEST_TIMEOUT_MS } from '../requests';
import { stageOutputs, type CloudFormationLookup } from '../stack-outputs';

export const SMOKE_HELP = 'npm run smoke -- --help';
const KEY_VARIABLE = 'PETSTORE_API_KEY';
/** How long each request waits, in milliseconds, when not REQUEST_TIMEOUT_MS: for a slow network, or a test. */
const TIMEOUT_VARIABLE = 'PETSTORE_SMOKE_TIMEOUT_MS';
const MAX_TIMEOUT_MS = 600_000;

export const SMOKE_USAGE = `Usage: npm run -s smoke -- (--url URL | --stage STAGE) [options]

Checks a running deployment from outside, as a client does: a create and a get of that pet
(with its deprecation headers), a listing and its next page, the 401 without a key, the 404 of
an unknown route. Every answer is checked against openapi.json. One line per check, then a
summary; it finishes in seconds: each request gives up after ${REQUEST_TIMEOUT_MS / 1000} s ($${TIMEOUT_VARIABLE} in ms
to change), and once one got no answer, nothing more is sent.

Options:
  --url URL         the API's base URL, ending in ${BASE_PATH} (as the stack's ApiUrl output gives it);
                    https, or http on this machine only (localhost, 127.x.x.x, [::1])
  --stage STAGE     a deployed stage: the URL is the ApiUrl output of stack ${stackName('STAGE')}; for a
                    stage in several regions, the stage's domain (Route 53 picks the region), read
                    from its home region's stack
  --region REGION   the AWS region of --stage (default: from the AWS environment); for a stage in
                    several regions, that region alone, at its own name (its RegionalApiUrl output)
  --key KEY         the API key (default: $${KEY_VARIABLE}). Prefer the variable: npm prints the
                    command line it runs, so --key shows the key (and -s, npm's --silent, is
                    needed for --json anyway)
  --read-only       create nothing: for prod, with a key that has only pets:read
  --json            print the report as one JSON document
  --help            show this help

Exits 1 when a check failed, 2 when the smoke test cannot start (a bad option, no key, no stack
or no URL from it).
`;

/** Where the deployment is: an address given, or a stage whose stack names it. */
export type SmokeTarget =
  { readonly kind: 'url'; readonly url: string } | { readonly kind: 'stage'; readonly stage: string; readonly region?: string };

export interface SmokeCommand {
  readonly target: SmokeTarget;
  readonly key: string;
  readonly readOnly: boolean;
  readonly json: boolean;
  /** How long each request waits for its answer. */
  readonly timeoutMs: number;
}

/** This machine: the only host a key may be sent to in clear. */
const isLoopback = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** The base URL as the checks use it: http(s), its path the base path, no trailing slash. */
export const baseUrlOf = (value: string, source: string): string => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const path = url?.pathname.replace(/\/+$/, '');
  if (
    (url?.protocol !== 'http:' && url?.protocol !== 'https:') ||
    path !== BASE_PATH ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new UsageError(`${source} must be the API's base URL, http or https and ending in ${BASE_PATH}: see ${SMOKE_HELP}`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UsageError(
      `${source} is plain http to ${url.host}, which would carry the key in clear: use https (http is for this machine only): see ${SMOKE_HELP}`,
    );
  }
  return `${url.origin}${BASE_PATH}`;
};

/** The command line `args` (after `--`), read against `env`; undefined when it asks for the help. */
export const parseSmokeCommand = (
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): SmokeCommand | undefined => {
  const { values } = parseCommandLine(
    {
      args: [...args],
      options: {
        url: { type: 'string' },
        stage: { type: 'string' },
        region: { type: 'string' },
        key: { type: 'string' },
        'read-only': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    },
    SMOKE_HELP,
  );
  if (values.help) return undefined;

  if (values.url !== undefined && values.stage !== undefined) {
    throw new UsageError(`give --url or --stage, not both (--stage finds the URL in its stack): see ${SMOKE_HELP}`);
  }
  if (values.region !== undefined && values.stage === undefined) throw new UsageError(`--region goes with --stage: see ${SMOKE_HELP}`);
  let target: SmokeTarget;
  if (values.url !== undefined) target = { kind: 'url', url: baseUrlOf(values.url, '--url') };
  else if (values.stage !== undefined && values.stage !== '') target = { kind: 'stage', stage: values.stage, region: values.region };
  else throw new UsageError(`give the deployment to check, --url URL or --stage STAGE: see ${SMOKE_HELP}`);

  const key = values.key ?? env[KEY_VARIABLE] ?? '';
  if (key.trim() === '') throw new UsageError(`give an API key, with --key or in ${KEY_VARIABLE}: see ${SMOKE_HELP}`);
  return { target, key, readOnly: values['read-only'], json: values.json, timeoutMs: timeoutOf(env[TIMEOUT_VARIABLE]) };
};

/** $PETSTORE_SMOKE_TIMEOUT_MS, when set, else REQUEST_TIMEOUT_MS. */
const timeoutOf = (value: string | undefined): number => {
  if (value === undefined || value === '') return REQUEST_TIMEOUT_MS;
  const ms = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(ms >= 1 && ms <= MAX_TIMEOUT_MS))
    throw new UsageError(`${TIMEOUT_VARIABLE} must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}: see ${SMOKE_HELP}`);
  return ms;
};

/** Which region's stack a stage target is read from (undefined: the AWS environment's), and which of its outputs. */
export interface StackLookup {
  readonly region: string | undefined;
  readonly output: (typeof stackOutputs)['apiUrl' | 'regionalApiUrl'];
}

/**
 * Where a stage's URL is found. A stage in one region: its stack's ApiUrl, in --region or the
 * environment's. A stage in several (infra/stages.ts): with --region, that region's stack and its
 * own name (RegionalApiUrl), so that exactly that region answers; without, the stage's domain
 * (ApiUrl, the same in every region), read from its home region's stack (the first).
 */
export const stackLookup = (target: Extract<SmokeTarget, { kind: 'stage' }>): StackLookup => {
  const regions = stageSettings(target.stage).regions ?? [];
  if (regions.length === 0) return { region: target.region, output: stackOutputs.apiUrl };
  if (target.region === undefined) return { region: regions[0], output: stackOutputs.apiUrl };
  if (!regions.includes(target.region)) {
    throw new UsageError(`Stage '${target.stage}' runs in ${regions.join(', ')}, not in ${target.region}: see ${SMOKE_HELP}`);
  }
  return { region: target.region, output: stackOutputs.regionalApiUrl };
};

/**
 * The base URL of the target: --url as given, or the stage's stack's output (stackLookup). Without
 * it the smoke test cannot start, whatever the reason: every failure is a UsageError (exit 2).
 */
export const resolveBaseUrl = async (target: SmokeTarget, cloudFormation?: CloudFormationLookup): Promise<string> => {
  if (target.kind === 'url') return target.url;
  const { region, output } = stackLookup(target);
  const outputs = await stageOutputs(target.stage, cloudFormation ?? new CloudFormationClient({ region })).catch((error: unknown) => {
    throw error instanceof UsageError ? error : new UsageError(error instanceof Error ? error.message : String(error));
  });
  const url = outputs[output];
  const where = `stack ${stackName(target.stage)}${region === undefined ? '' : ` in ${region}`}`;
  if (url === undefined) throw new UsageError(`S${where.slice(1)} has no ${output} output.`);
  return baseUrlOf(url, `The ${output} output of ${where}`);
};
