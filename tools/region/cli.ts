/**
 * `npm run region -- drain|restore|status`: takes one region of a stage in several out of the
 * stage's domain, and puts it back, with one write to its regional switch (shared/region-switch.ts):
 * the region's health check, its probe's alarm, Route 53's health check and DNS follow. A change
 * calls DynamoDB (its data plane) and STS (its regional endpoint) in one region of the stage (the
 * region named, or --via), and nothing else: no Route 53 or IAM call, whose control planes run in
 * us-east-1, and no CloudFormation, a control plane the drained region may have lost (docs). Every
 * input is checked before any call.
 */
import { localActor, actorOf, type CallerLookup } from '../keys/caller';
import { parseCommandLine, UsageError, writeOutput } from '../cli';
import type { RegionDrain } from '../../shared/region-switch';
import { regionSwitches } from './switches';
import {
  REGION_HELP,
  resolveRegionTarget,
  TARGET_OPTIONS,
  TARGET_USAGE,
  targetFailure,
  type DynamoDBIn,
  type RegionTarget,
} from './target';

export const USAGE = `Usage:
  npm run region -- drain REGION [TARGET]    take REGION out of the stage's domain: its health check
                                             fails from its next probe, and Route 53 stops answering
                                             with it within about 1 to 3 minutes (plus cached answers)
  npm run region -- restore REGION [TARGET]  put REGION back: its health check passes again from its
                                             next probe, and Route 53 answers with it again
  npm run region -- status [REGION] [--json] [TARGET]
                                             whether each region (or REGION) is drained, since when
                                             and by whom

  The switch is one item per region in the stage's idempotency table, which is strongly
  consistent across its regions: a write needs a quorum of them, so it is taken with any one
  region down (us-east-1 too), and every region reads it at once. A drain stays until restored,
  deploys included. The last region not drained cannot be drained: with every region's check
  failing, Route 53 would answer with all of them.

  --json    status: one JSON object per region: region, drained, drainedAt, drainedBy

${TARGET_USAGE}
`;

type Env = Readonly<Record<string, string | undefined>>;

export interface RegionCommandOptions {
  readonly env?: Env;
  /** Where the lines go; standard output when absent. */
  readonly print?: (line: string) => void;
  /** How the tool asks AWS STS who the caller is, in the region the call goes through; the SDK's client of that region when absent. */
  readonly stsIn?: (region: string) => CallerLookup;
  /** How the tool reaches DynamoDB through one region on AWS; the SDK's client of that region when absent. */
  readonly dynamoDBIn?: DynamoDBIn;
  readonly now?: () => Date;
}

const COMMANDS = ['drain', 'restore', 'status'] as const;
type Command = (typeof COMMANDS)[number];
const isCommand = (name: string): name is Command => (COMMANDS as readonly string[]).includes(name);

const PARSE_OPTIONS = { json: { type: 'boolean' }, ...TARGET_OPTIONS, help: { type: 'boolean' } } as const;

interface RegionInvocation {
  readonly command: Command;
  /** The region acted on; status without one reads every region of the stage. */
  readonly region?: string;
  readonly json: boolean;
  readonly target: { readonly stage?: string; readonly via?: string; readonly endpoint?: string; readonly table?: string };
}

const parseRegionCommand = (argv: string[]): RegionInvocation | { readonly usage: number } => {
  const { values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, options: PARSE_OPTIONS }, REGION_HELP);
  const [command, region, ...rest] = positionals;
  const { help, json, ...target } = values;
  if (help || !command) return { usage: help ? 0 : 2 };
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}': use ${COMMANDS.join(', ')} (see ${REGION_HELP}).`);
  if (rest.length > 0) throw new UsageError(`${command} takes one region besides its options (see ${REGION_HELP}).`);
  if (region === undefined && command !== 'status') throw new UsageError(`${command} needs the region to ${command}, such as us-east-2.`);
  if (json && command !== 'status') throw new UsageError(`only status takes --json (see ${REGION_HELP}).`);
  return { command, region, json: json === true, target };
};

/** Where the call went, for the printed line: the stage, and the region it went through when not the region itself. */
const placeOf = (target: RegionTarget, region: string): string => {
  if (target.stage === undefined) return '';
  const via = target.viaFor(region);
  return ` of stage ${target.stage.name}${via === region ? '' : ` (through ${via})`}`;
};

/** The command line of `command` on `region`, with the target the operator gave. */
const commandFor = (command: Command, region: string, target: RegionInvocation['target']): string =>
  ['npm run region --', command, region, ...Object.entries(target).map(([option, value]) => `--${option} ${value}`)].join(' ');

const drainLine = ({ region, drainedAt, drainedBy }: RegionDrain): string => `${region}\tdrained\tsince ${drainedAt}\tby ${drainedBy}`;

const statusOf = (region: string, drain: RegionDrain | undefined, json: boolean): string =>
  json
    ? JSON.stringify({ region, drained: drain !== undefined, drainedAt: drain?.drainedAt ?? null, drainedBy: drain?.drainedBy ?? null })
    : drain === undefined
      ? `${region}\tnot drained`
      : drainLine(drain);

/** Runs one region command; returns the process exit code. A refusal is thrown: UsageError (exit 2) or another Error (exit 1). */
export const runRegionCommand = async (argv: string[], options: RegionCommandOptions = {}): Promise<number> => {
  const env = options.env ?? process.env;
  // A reader that closed standard output loses the line, never the change, and meets no stack trace.
  const print = options.print ?? ((line: string) => void writeOutput(`${line}\n`).catch(() => undefined));
  const now = options.now ?? (() => new Date());
  const invocation = parseRegionCommand(argv);
  if ('usage' in invocation) {
    print(USAGE);
    return invocation.usage;
  }
  const target = resolveRegionTarget(invocation.target, env, options.dynamoDBIn);
  try {
    const { command, region, json } = invocation;
    if (region !== undefined) target.checkRegion(region);
    const switches = (of: string) => regionSwitches(target.clientFor(of), target.tableName);
    /** Runs one call about `of`'s switch, its failure in one line. */
    const about = async <T>(of: string, call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        throw targetFailure(target, of, error);
      }
    };
    /** Who makes the change: on AWS asked of the STS of the region the call goes through (not us-east-1's unless it is that one). */
    const caller = (of: string) => {
      const via = target.viaFor(of);
      return via === undefined ? Promise.resolve(localActor(env)) : actorOf({ onAws: true, region: via }, env, options.stsIn?.(via));
    };

    if (command === 'status') {
      const regions = region !== undefined ? [region] : target.stage?.regions;
      if (regions === undefined) throw new UsageError(`status needs a REGION without --stage: locally the tool cannot know the regions.`);
      // Each region's switch read through its own DynamoDB (or --via): one that does not answer leaves the others' lines.
      const read = await Promise.allSettled(regions.map((each) => about(each, () => switches(each).status(each))));
      for (const [index, each] of regions.entries()) {
        const result = read[index];
        if (result?.status === 'fulfilled') print(statusOf(each, result.value, json));
      }
      const failed = read.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw failed.reason;
      return 0;
    }

    const acting = region ?? '';
    if (command === 'drain') {
      const others = target.stage?.regions.filter((each) => each !== acting) ?? [];
      const drained = await Promise.all(others.map((each) => about(acting, () => switches(acting).status(each))));
      if (others.length > 0 && drained.every((drain) => drain !== undefined)) {
        throw new UsageError(
          `Every other region of stage ${target.stage?.name} is drained (${others.join(', ')}): draining ${acting} too would leave none, ` +
            'and Route 53 answers with every region when every check fails. Restore one first.',
        );
      }
      const by = await caller(acting);
      const { drain, written } = await about(acting, () => switches(acting).drain(acting, by, now()));
      print(
        written
          ? `Drained ${acting}${placeOf(target, acting)} at ${drain.drainedAt}, by ${by}: its health check fails from its next probe, ` +
              `and Route 53 stops answering with it within minutes. Undo: ${commandFor('restore', acting, invocation.target)}`
          : `${acting}${placeOf(target, acting)} was drained already, since ${drain.drainedAt} by ${drain.drainedBy}: nothing changed.`,
      );
      return 0;
    }

    const by = await caller(acting);
    const ended = await about(acting, () => switches(acting).restore(acting));
    print(
      ended === undefined
        ? `${acting}${placeOf(target, acting)} was not drained: nothing changed.`
        : `Restored ${acting}${placeOf(target, acting)} at ${now().toISOString()}, by ${by} (drained since ${ended.drainedAt} by ${ended.drainedBy}): ` +
            'its health check passes from its next probe, and Route 53 answers with it again within minutes.',
    );
    return 0;
  } finally {
    target.close();
  }
};
