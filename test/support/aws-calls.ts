/**
 * Every AWS call the functions make during the tests, as IAM sees it: the action, what it acts
 * on, and the condition keys AWS documents for it. The behaviour tests record them (through the
 * SDK itself, for the functions the local server runs, and explicitly for calls a test mocks),
 * and test/infra/iam-simulation.test.ts, which runs after them, simulates each one against the
 * calling function's role in the synthesized stack.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '../../shared/project-root';
import { tableDefinitions, type TableNames } from '../../shared/tables';
import type { Invocation } from '../../tools/local-server/invocation';

/** What a call acts on, named by what it is in the stack rather than by a local or deployed name. */
export type ResourceRef =
  | { readonly kind: 'table'; readonly table: keyof TableNames; readonly index?: string }
  /** One of the stack's functions (its name in the stack, e.g. `listPets`), at a version or alias. */
  | { readonly kind: 'function'; readonly function: string; readonly qualifier?: string }
  /** The deployment group of the release under way: any of the stage's. */
  | { readonly kind: 'deploymentGroup' }
  /** The stage's CodeDeploy application. */
  | { readonly kind: 'codeDeployApplication' }
  /** The authorizer cache of a stage of the stack's REST API (the stage as the call named it). */
  | { readonly kind: 'authorizerCache'; readonly stage: string }
  /**
   * The account's API keys in a region (GetApiKeys), or one of them by its id (DeleteApiKey): in
   * `region`, one of the stage's regions, when the call was sent there; else in the caller's own.
   */
  | { readonly kind: 'apiKeys'; readonly id?: string; readonly region?: string }
  /** An action that takes no resource (IAM's `*`). */
  | { readonly kind: 'any' };

export type ContextValue = string | readonly string[];

export interface AwsCall {
  /** The calling function's name in the stack. */
  readonly function: string;
  /** `service:Action`, as IAM names it. */
  readonly action: string;
  readonly resource: ResourceRef;
  readonly context: Readonly<Record<string, ContextValue>>;
}

/** Where runs write their calls: a folder per run, one file per test worker in it. */
const AWS_CALLS_ROOT = resolve(projectRoot, 'node_modules/.cache/pet-store/aws-calls');
/**
 * The folder of this run, set by the run's global setup before any worker starts (workers inherit
 * it): a second run in the same checkout, a single file run beside `npm test` say, neither empties
 * nor adds to this one's calls.
 */
const RUN_FOLDER_VARIABLE = 'PET_STORE_AWS_CALLS_FOLDER';
const runFolder = (): string => process.env[RUN_FOLDER_VARIABLE] ?? resolve(AWS_CALLS_ROOT, 'unset');
/** Says whether the run that wrote the calls ran the whole suite (no file or name filter). */
const runFile = () => resolve(runFolder(), 'run.json');

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const startRecordingRun = (wholeSuite: boolean): void => {
  const folder = resolve(AWS_CALLS_ROOT, String(process.pid));
  // Started already by another project's setup of this run.
  if (process.env[RUN_FOLDER_VARIABLE] === folder) return;
  // The folders of runs that are over (their process is gone) go; a run still going keeps its own.
  mkdirSync(AWS_CALLS_ROOT, { recursive: true });
  for (const folder of readdirSync(AWS_CALLS_ROOT)) {
    const pid = Number(folder);
    if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid)) rmSync(resolve(AWS_CALLS_ROOT, folder), { recursive: true, force: true });
  }
  process.env[RUN_FOLDER_VARIABLE] = folder;
  rmSync(runFolder(), { recursive: true, force: true });
  mkdirSync(runFolder(), { recursive: true });
  writeFileSync(runFile(), JSON.stringify({ wholeSuite }));
};

export interface RecordedRun {
  readonly wholeSuite: boolean;
  readonly calls: readonly AwsCall[];
}

export const readRecordedRun = (): RecordedRun | undefined => {
  let run: { wholeSuite: boolean };
  try {
    run = JSON.parse(readFileSync(runFile(), 'utf8')) as { wholeSuite: boolean };
  } catch {
    return undefined;
  }
  const lines = readdirSync(runFolder())
    .filter((file) => file.endsWith('.jsonl'))
    .flatMap((file) => readFileSync(resolve(runFolder(), file), 'utf8').split('\n'))
    .filter((line) => line !== '');
  return { wholeSuite: run.wholeSuite, calls: [...new Set(lines)].map((line) => JSON.parse(line) as AwsCall) };
};

/** The lines this worker wrote already: each distinct call is written once. */
const written = new Set<string>();

export const recordAwsCall = (call: AwsCall): void => {
  const line = JSON.stringify(call);
  if (written.has(line)) return;
  written.add(line);
  mkdirSync(runFolder(), { recursive: true });
  appendFileSync(resolve(runFolder(), `${process.pid}.jsonl`), `${line}\n`);
};

/** A function's call to another of the stack's functions, named by its ARN or name, with its qualifier. */
export const functionRef = (functionName: string): ResourceRef => {
  const name = functionName.replace(/^arn:[^:]+:lambda:[^:]*:[^:]*:function:/, '');
  const [base = '', qualifier] = name.split(':');
  // Deployed names are `<project>-<stage>-<name>`: the part after the last hyphen is the stack's name for it.
  return { kind: 'function', function: base.slice(base.lastIndexOf('-') + 1), ...(qualifier ? { qualifier } : {}) };
};

/**
 * A FlushStageAuthorizersCache a function sent (as a test mocked it): API Gateway authorizes its
 * management calls as the HTTP verb on the resource's path, here DELETE on the stage's
 * `cache/authorizers`. The REST API is the stack's own; the stage is the one the call named.
 */
export const authorizerCacheFlushCall = (functionName: string, input: { readonly stageName?: string }): AwsCall => ({
  function: functionName,
  action: 'apigateway:DELETE',
  resource: { kind: 'authorizerCache', stage: input.stageName ?? '' },
  context: {},
});

/**
 * A DeleteApiKey (DELETE on /apikeys/{id}) or a GetApiKeys (GET on /apikeys) a function sent, as a
 * test mocked it; with `region`, sent with a client of that region of a stage in several.
 */
export const apiKeysCall = (functionName: string, input: { readonly apiKey?: string }, region?: string): AwsCall => ({
  function: functionName,
  action: input.apiKey === undefined ? 'apigateway:GET' : 'apigateway:DELETE',
  resource: {
    kind: 'apiKeys',
    ...(input.apiKey === undefined ? {} : { id: input.apiKey }),
    ...(region === undefined ? {} : { region }),
  },
  context: {},
});

// DynamoDB: each command as the IAM requests it makes ---------------------------------------

/** The document client's command names, and the low-level ones, as IAM actions. */
const DYNAMODB_ACTIONS: Readonly<Record<string, string>> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  TransactWrite: 'TransactWriteItems',
  TransactGet: 'TransactGetItems',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
};

/** Each kind of transaction item, and the action IAM checks for it (a transaction is its items). */
export const TRANSACTION_ITEM_ACTIONS = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
} as const;

/** Words of an expression that name no attribute. */
const EXPRESSION_WORDS = new Set(
  ['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN'].concat([
    'attribute_exists',
    'attribute_not_exists',
    'attribute_type',
    'begins_with',
    'contains',
    'size',
    'if_not_exists',
    'list_append',
  ]),
);

export interface ItemRequest {
  readonly TableName?: string;
  readonly IndexName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
  readonly UpdateExpression?: string;
  readonly ConditionExpression?: string;
  readonly KeyConditionExpression?: string;
  readonly FilterExpression?: string;
  readonly ProjectionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ReturnValues?: string;
  readonly Select?: string;
  readonly TransactItems?: ReadonlyArray<Partial<Record<keyof typeof TRANSACTION_ITEM_ACTIONS, ItemRequest>>>;
}

/** The top-level attributes a request names: its key's, its item's, and those of its expressions. */
export const attributesOf = (request: ItemRequest): string[] => {
  const names = [
    request.UpdateExpression,
    request.ConditionExpression,
    request.KeyConditionExpression,
    request.FilterExpression,
    request.ProjectionExpression,
  ]
    .filter((expression) => expression !== undefined)
    .join(' ')
    .replace(/:[A-Za-z0-9_]+/g, ' ')
    .replace(/#[A-Za-z0-9_]+/g, (placeholder) => request.ExpressionAttributeNames?.[placeholder] ?? placeholder)
    .match(/[A-Za-z_][A-Za-z0-9_]*/g);
  const words = (names ?? []).filter((word) => !EXPRESSION_WORDS.has(word));
  return [...new Set([...Object.keys(request.Key ?? {}), ...Object.keys(request.Item ?? {}), ...words])].sort();
};

/** A key attribute's value as a string, whether the request holds it marshalled (`{ N: '1' }`) or not. */
const scalar = (value: unknown): string | undefined => {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (value && typeof value === 'object') {
    const [typed] = Object.values(value as Record<string, unknown>);
    return typeof typed === 'string' ? typed : undefined;
  }
  return undefined;
};

const tableOf = (tables: Partial<TableNames>, tableName: string | undefined): keyof TableNames | undefined =>
  (Object.keys(tables) as Array<keyof TableNames>).find((table) => tables[table] === tableName);

const itemCall = (
  functionName: string,
  action: string,
  request: ItemRequest,
  tables: Partial<TableNames>,
  enclosing?: string,
): AwsCall | undefined => {
  const table = tableOf(tables, request.TableName);
  // Another table is the local emulation's own (the audit log standing in for CloudWatch Logs).
  if (table === undefined) return undefined;
  const attributes = attributesOf(request);
  const partitionKey = tableDefinitions[table].partitionKey.name;
  const leadingKey = scalar((request.Key ?? request.Item)?.[partitionKey]);
  return {
    function: functionName,
    action: `dynamodb:${action}`,
    resource: { kind: 'table', table, ...(request.IndexName ? { index: request.IndexName } : {}) },
    context: {
      ...(attributes.length > 0 ? { 'dynamodb:Attributes': attributes } : {}),
      ...(leadingKey !== undefined ? { 'dynamodb:LeadingKeys': [leadingKey] } : {}),
      ...(request.ReturnValues ? { 'dynamodb:ReturnValues': request.ReturnValues } : {}),
      ...(request.Select ? { 'dynamodb:Select': request.Select } : {}),
      ...(enclosing ? { 'dynamodb:EnclosingOperation': enclosing } : {}),
    },
  };
};

/** The IAM requests one DynamoDB command makes: one, or one per item of a transaction. */
export const dynamodbCalls = (functionName: string, commandName: string, request: ItemRequest, tables: Partial<TableNames>): AwsCall[] => {
  const name = commandName.replace(/Command$/, '');
  const action = DYNAMODB_ACTIONS[name] ?? name;
  if (action === 'TransactWriteItems') {
    return (request.TransactItems ?? []).flatMap((item) =>
      Object.entries(TRANSACTION_ITEM_ACTIONS).flatMap(([kind, itemAction]) => {
        const itemRequest = item[kind as keyof typeof TRANSACTION_ITEM_ACTIONS];
        const call = itemRequest && itemCall(functionName, itemAction, itemRequest, tables, action);
        return call ? [call] : [];
      }),
    );
  }
  const call = itemCall(functionName, action, request, tables);
  return call ? [call] : [];
};

// The recorder: every SDK client's send, inside an invocation ------------------------------

interface RecorderState {
  installed: boolean;
  /** The invocation context of the test file running now (each file has its own module graph). */
  invocations?: { getStore(): Invocation | undefined };
}

const STATE_KEY = Symbol.for('pet-store.aws-call-recorder');

/**
 * Records the calls that every SDK client sends inside one of the local server's invocations.
 * The SDK is loaded once per worker while each test file has its own modules, so the send is
 * wrapped once, and each file points it at its own invocation context.
 */
export const installAwsCallRecorder = (invocations: RecorderState['invocations']): void => {
  const global = globalThis as { [STATE_KEY]?: RecorderState };
  const state = (global[STATE_KEY] ??= { installed: false });
  state.invocations = invocations;
  if (state.installed) return;
  state.installed = true;
  // Every SDK client's send is the one of Smithy's Client, which DynamoDBClient extends.
  const smithyClient = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...args: unknown[]) => unknown };
  const send = smithyClient.send;
  smithyClient.send = function (this: { config?: { serviceId?: string } }, ...args: unknown[]) {
    const invocation = state.invocations?.getStore();
    const command = args[0] as { constructor: { name: string }; input?: ItemRequest } | undefined;
    if (invocation && command && this.config?.serviceId === 'DynamoDB') {
      for (const call of dynamodbCalls(invocation.functionName, command.constructor.name, command.input ?? {}, invocation.tables)) {
        recordAwsCall(call);
      }
    }
    return send.apply(this, args);
  };
};

// Calls a test mocks (aws-sdk-client-mock), recorded as the function's own ------------------

/** How each mocked command a function sends is named to IAM. */
const MOCKED_COMMANDS: Readonly<Record<string, (input: Record<string, unknown>) => Pick<AwsCall, 'action' | 'resource'>>> = {
  InvokeCommand: (input) => ({ action: 'lambda:InvokeFunction', resource: functionRef(String(input.FunctionName)) }),
  GetDeploymentCommand: () => ({ action: 'codedeploy:GetDeployment', resource: { kind: 'deploymentGroup' } }),
  GetApplicationRevisionCommand: () => ({ action: 'codedeploy:GetApplicationRevision', resource: { kind: 'codeDeployApplication' } }),
  PutLifecycleEventHookExecutionStatusCommand: () => ({
    action: 'codedeploy:PutLifecycleEventHookExecutionStatus',
    resource: { kind: 'deploymentGroup' },
  }),
};

/** The calls a mocked client received (`mock.calls()` of aws-sdk-client-mock), recorded as `functionName`'s. */
export const recordMockedCalls = (functionName: string, calls: ReadonlyArray<{ readonly args: readonly unknown[] }>): void => {
  for (const { args } of calls) {
    const command = args[0] as { constructor: { name: string }; input: Record<string, unknown> };
    const name = MOCKED_COMMANDS[command.constructor.name];
    if (!name) throw new Error(`${functionName} sent ${command.constructor.name}, which the IAM check does not name yet: add it`);
    recordAwsCall({ function: functionName, ...name(command.input), context: {} });
  }
};
