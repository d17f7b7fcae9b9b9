/**
 * An HTTP proxy in front of DynamoDB Local that a test controls. It reads each call's operation
 * (the `X-Amz-Target` header, DynamoDB's or DynamoDB Streams') and table (`TableName` in the
 * body), and answers it with a fault or passes it through:
 *
 * - `throttle`: HTTP 400 `ProvisionedThroughputExceededException` (or `ThrottlingException`), as
 *   DynamoDB sends it;
 * - `internal-error`: HTTP 500 `InternalServerError`;
 * - `refuse`: HTTP 400 with the rule's `errorType` (`ResourceNotFoundException` by default), as
 *   DynamoDB refuses a call it cannot serve;
 * - `hang`: reads the request and never answers;
 * - `drop`: closes the connection without forwarding;
 * - `lose-answer`: forwards the call, lets DynamoDB apply it, then closes the connection instead
 *   of answering (the write happened; the client cannot know);
 * - `slow`: forwards the call and answers after the rule's `delayMs`, as a busy database does.
 *
 * Faults last for the next N matching calls or until `recover()`; a `plan` can decide call by
 * call (seeded schedules). The proxy counts the calls it saw, so tests can assert retries.
 */
import { once } from 'node:events';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'pass' | 'throttle' | 'internal-error' | 'refuse' | 'hang' | 'drop' | 'lose-answer' | 'slow';

/**
 * Operations by the name in `X-Amz-Target` without its `DynamoDB_20120810.` prefix, or DynamoDB
 * Streams' `DynamoDBStreams_20120810.` (DescribeStream, GetShardIterator, GetRecords).
 */
export type Operation = 'GetItem' | 'PutItem' | 'Query' | 'Scan' | 'DescribeStream' | 'GetRecords' | (string & {});

export interface Selector {
  readonly operation?: Operation;
  readonly table?: string;
}

export interface FaultRule extends Selector {
  readonly fault: Fault;
  /** The next this many matching calls; until `recover()` when absent. */
  readonly times?: number;
  /** Which throttling error a `throttle` answers with. */
  readonly throttleError?: 'ProvisionedThroughputExceededException' | 'ThrottlingException';
  /** The error a `refuse` answers with. */
  readonly errorType?: keyof typeof REFUSALS;
  /** How long a `slow` call's answer is held, in milliseconds. */
  readonly delayMs?: number;
}

export interface ProxiedCall {
  readonly operation: Operation;
  readonly table: string | undefined;
  /** The request body, parsed. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The SDK's `amz-sdk-request` header: the attempt, and the most the client makes (`attempt=1; max=2`). */
  readonly sdkRequest: string | undefined;
  /** When the proxy had read it (performance.now()). */
  readonly at: number;
}

/** Decides a call's fault; `undefined` leaves it to the rules. */
export type FaultPlan = (call: ProxiedCall) => Fault | undefined;

export interface FaultProxy {
  readonly endpoint: string;
  /** Adds a fault; the first rule that matches a call, in the order added, decides it. */
  inject(rule: FaultRule): void;
  /** Decides every call with `plan` first (until `recover()`). */
  plan(plan: FaultPlan): void;
  /** Back to passing every call through. */
  recover(): void;
  /** The calls seen (faulted or not) that match the selector. */
  calls(selector?: Selector): number;
  /** When each of those calls arrived, in order (performance.now()). */
  arrivals(selector?: Selector): number[];
  resetCalls(): void;
  close(): Promise<void>;
}

const TARGET_PREFIXES = ['DynamoDB_20120810.', 'DynamoDBStreams_20120810.'];
const ERROR_NAMESPACE = 'com.amazonaws.dynamodb.v20120810#';

/** The refusals a `refuse` can answer with, and their messages. */
const REFUSALS = {
  ResourceNotFoundException: 'Requested resource not found',
  UnknownOperationException: 'An unknown operation was requested.',
  AccessDeniedException: 'User is not authorized to perform this operation.',
  // A strongly consistent global table's answer to a write that met another region's write of the item.
  ReplicatedWriteConflictException: 'Replicated write conflict',
} as const;

const matches = (selector: Selector, call: ProxiedCall) =>
  (selector.operation === undefined || selector.operation === call.operation) &&
  (selector.table === undefined || selector.table === call.table);

const readAll = async (stream: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const parseBody = (raw: Buffer): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** An error answer in DynamoDB's wire format (awsJson1_0). */
const answerError = (res: ServerResponse, status: number, type: string, message: string) => {
  const body = JSON.stringify({ __type: `${ERROR_NAMESPACE}${type}`, message });
  res.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(body),
    'x-amzn-ErrorType': type,
    'x-amzn-RequestId': `fault-proxy-${Date.now()}`,
  });
  res.end(body);
};

export const startFaultProxy = async (target: string): Promise<FaultProxy> => {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let rules: Array<FaultRule & { remaining: number }> = [];
  let currentPlan: FaultPlan | undefined;
  let seen: ProxiedCall[] = [];

  const decide = (call: ProxiedCall): { fault: Fault; rule?: FaultRule } => {
    const planned = currentPlan?.(call);
    if (planned !== undefined) return { fault: planned };
    const rule = rules.find((candidate) => candidate.remaining > 0 && matches(candidate, call));
    if (!rule) return { fault: 'pass' };
    rule.remaining -= 1;
    return { fault: rule.fault, rule };
  };

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const outgoing = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent },
        (answer) => {
          readAll(answer).then(
            (answerBody) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: answerBody }),
            reject,
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server = createServer(async (req, res) => {
    const raw = await readAll(req);
    const target = String(req.headers['x-amz-target'] ?? '');
    const body = parseBody(raw);
    const prefix = TARGET_PREFIXES.find((candidate) => target.startsWith(candidate)) ?? '';
    const call: ProxiedCall = {
      operation: target.slice(prefix.length),
      table: typeof body.TableName === 'string' ? body.TableName : undefined,
      body,
      sdkRequest: req.headers['amz-sdk-request'] as string | undefined,
      at: performance.now(),
    };
    seen.push(call);
    const { fault, rule } = decide(call);
    switch (fault) {
      case 'throttle': {
        const type = rule?.throttleError ?? 'ProvisionedThroughputExceededException';
        return answerError(res, 400, type, 'The level of configured provisioned throughput for the table was exceeded.');
      }
      case 'internal-error':
        return answerError(res, 500, 'InternalServerError', 'Internal server error');
      case 'refuse': {
        const type = rule?.errorType ?? 'ResourceNotFoundException';
        return answerError(res, 400, type, REFUSALS[type]);
      }
      case 'hang':
        return; // the request was read; no answer ever comes
      case 'drop':
        return void req.socket.destroy();
      case 'pass':
      case 'slow':
      case 'lose-answer': {
        try {
          const answer = await forward(req, raw);
          if (fault === 'lose-answer') return void req.socket.destroy();
          if (fault === 'slow') await new Promise((wait) => setTimeout(wait, rule?.delayMs ?? 0));
          if (req.socket.destroyed) return; // the client gave up waiting
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        } catch {
          req.socket.destroy();
        }
      }
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject: (rule) => {
      rules.push({ ...rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
    },
    plan: (plan) => {
      currentPlan = plan;
    },
    recover: () => {
      rules = [];
      currentPlan = undefined;
    },
    calls: (selector = {}) => seen.filter((call) => matches(selector, call)).length,
    arrivals: (selector = {}) => seen.filter((call) => matches(selector, call)).map((call) => call.at),
    resetCalls: () => {
      seen = [];
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      agent.destroy();
      await once(server, 'close');
    },
  };
};
