/**
 * The contract commands, callable in-process (tools/contract/main.ts is their entry point).
 * `npm run contract`: compares the OpenAPI document the code generates now with the released
 * contract of /v1 and lists the changes; exit 1 when one is breaking or to review.
 * `npm run contract:accept`: writes the current document into the contract, deliberately, when
 * nothing breaks (and nothing is left to review, unless --reviewed); otherwise it names the
 * changes, exits 1, and leaves the file as it was.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../../shared/project-root';
import { parseCommandLine, UsageError } from '../cli';
import { buildOpenApiDocument } from '../openapi/document';
import { compareContracts, type ContractComparison } from './compare';
import { CONTRACT_PATH } from './paths';

const HELP = 'npm run contract -- --help';
const USAGE = `Usage:
  npm run contract [-- OPTIONS]             list how the current document differs from the
                                            released contract; exit 1 if a change breaks /v1
                                            or is to review
  npm run contract:accept [-- OPTIONS]      write the current document into the contract, if
                                            no change breaks /v1

  --contract FILE   the released contract (default: ${CONTRACT_PATH})
  --document FILE   the current document (default: the one tools/openapi/document.ts builds now,
                    which npm run openapi writes)
  --reviewed        (accept) also take the changes to review: the diff tool cannot classify
                    them, and a person has checked that no client of /v1 can break`;

/** Where a command writes: its standard output and its standard error, a line at a time. */
export interface ContractOutput {
  readonly print: (text: string) => void;
  readonly printError: (text: string) => void;
}

const CONSOLE: ContractOutput = { print: (text) => console.log(text), printError: (text) => console.error(text) };

interface Command {
  readonly accept: boolean;
  readonly reviewed: boolean;
  /** As the operator named it (the default relative to the project root), for the messages. */
  readonly contractName: string;
  readonly contractFile: string;
  readonly documentFile: string | undefined;
}

const parseCommand = (argv: readonly string[]): Command | undefined => {
  const { values, positionals } = parseCommandLine(
    {
      args: [...argv],
      allowPositionals: true,
      options: {
        contract: { type: 'string' },
        document: { type: 'string' },
        reviewed: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    },
    HELP,
  );
  if (values.help) return undefined;
  const [action, ...extra] = positionals;
  if ((action !== undefined && action !== 'accept') || extra.length > 0) {
    throw new UsageError(`unknown command '${[action, ...extra].join(' ')}': see ${HELP}`);
  }
  if (values.reviewed && action !== 'accept') throw new UsageError(`--reviewed goes with npm run contract:accept: see ${HELP}`);
  return {
    accept: action === 'accept',
    reviewed: values.reviewed ?? false,
    contractName: values.contract ?? CONTRACT_PATH,
    contractFile: values.contract ?? resolve(projectRoot, CONTRACT_PATH),
    documentFile: values.document,
  };
};

const readJson = async (file: string, name: string): Promise<unknown> => {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${name}: ${error.code ?? error.message}`);
  });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${name} is not JSON: ${(error as Error).message}`);
  }
};

/** The contract's text as Prettier leaves it (the repository's settings, wherever the file is). */
const contractText = async (document: unknown): Promise<string> => {
  const filepath = resolve(projectRoot, CONTRACT_PATH);
  return format(JSON.stringify(document, null, 2), { ...(await resolveConfig(filepath)), filepath });
};

const indented = (title: string, lines: readonly string[]) => [title, ...lines.map((line) => `  ${line}`)].join('\n');

const listing = ({ breaking, review, additive }: ContractComparison): string =>
  [
    ['Breaking (a client of /v1 would fail):', breaking] as const,
    ['To review (the diff tool cannot say they are safe; accept with --reviewed once checked):', review] as const,
    ['Additive (npm run contract:accept takes them into the contract):', additive] as const,
  ]
    .filter(([, lines]) => lines.length > 0)
    .map(([title, lines]) => indented(title, lines))
    .join('\n');

const changeCount = ({ breaking, review, additive }: ContractComparison) => breaking.length + review.length + additive.length;

/** `npm run contract`: the changes, and exit 1 when one breaks /v1 or is to review. */
const showChanges = (contractName: string, comparison: ContractComparison, { print, printError }: ContractOutput): number => {
  const { breaking, review } = comparison;
  print(changeCount(comparison) === 0 ? `${contractName}: the current document makes no change to it` : listing(comparison));
  if (breaking.length + review.length === 0) return 0;
  printError(`npm run contract: ${breaking.length} breaking, ${review.length} to review: see the list above`);
  return 1;
};

/** `npm run contract:accept`: the current document becomes the contract, unless a change is refused. */
const acceptChanges = async (
  { reviewed, contractName, contractFile }: Command,
  current: unknown,
  comparison: ContractComparison,
  { print, printError }: ContractOutput,
) => {
  const { breaking, review, additive } = comparison;
  const refused = [...breaking, ...(reviewed ? [] : review)];
  if (refused.length > 0) {
    const why = [
      ...(breaking.length > 0 ? [`${breaking.length} would break /v1`] : []),
      ...(!reviewed && review.length > 0 ? [`${review.length} to review (accept with --reviewed once checked)`] : []),
    ];
    printError(indented(`npm run contract:accept: refused, ${contractName} is unchanged: ${why.join(', ')}:`, refused));
    return 1;
  }
  const text = await contractText(current);
  if ((await readFile(contractFile, 'utf8')) !== text) await writeFile(contractFile, text);
  const count = changeCount(comparison);
  print(
    count === 0
      ? `${contractName}: the current document makes no change to it`
      : indented(`${contractName}: accepted ${count} change${count === 1 ? '' : 's'}:`, [...review, ...additive]),
  );
  return 0;
};

/**
 * Runs `npm run contract` (argv as after `--`) or, with `accept` first, `npm run contract:accept`,
 * and returns its exit status. A usage error throws a UsageError, any other failure an Error:
 * the caller reports it (tools/cli.ts reportFailure).
 */
export const runContractCommand = async (argv: readonly string[], output: ContractOutput = CONSOLE): Promise<number> => {
  const command = parseCommand(argv);
  if (command === undefined) {
    output.print(USAGE);
    return 0;
  }
  const released = await readJson(command.contractFile, command.contractName);
  // Built now unless a file is named, so a stale generated/openapi.json cannot hide a change.
  const current =
    command.documentFile === undefined
      ? JSON.parse(JSON.stringify(buildOpenApiDocument()))
      : await readJson(command.documentFile, command.documentFile);
  const comparison = compareContracts(released, current);
  return command.accept ? acceptChanges(command, current, comparison, output) : showChanges(command.contractName, comparison, output);
};

/** The name a failure of `argv` is reported under. */
export const contractToolName = (argv: readonly string[]): string =>
  argv[0] === 'accept' ? 'npm run contract:accept' : 'npm run contract';
