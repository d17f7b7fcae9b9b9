/**
 * The local server: a node:http front for the gateway stand-in, wired to the real handler
 * modules (loaded from the route table) and to a DynamoDB the caller names; with the authorizer
 * cache on, it follows the keys table's changes (key-changes.ts) to drop a changed key's answers,
 * unless told not to (a server standing for one region of several: see `dropChangedKeys`).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { gatewayAnswer, GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { errorResponse, withCommonHeaders } from '../../shared/http/response';
import { randomUUID } from 'node:crypto';
import { logger, safeErrorFields } from '../../shared/logger';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import type { Clock } from '../../shared/http/http-api';
import type { IdGenerator } from '../../shared/ids';
import { databaseHealth, HEALTH_REUSE_SECONDS, reusedFor } from '../../shared/database-health';
import { repositoriesFor } from '../../shared/repositories';
import type { TableNames } from '../../shared/tables';
import { createDocumentation } from './docs';
import {
  createGateway,
  DEFAULT_AUTH_CACHE_TTL_SECONDS,
  GATEWAY_MAX_BODY_BYTES,
  withGatewayRequestId,
  type BodyRefusal,
  type GatewayOptions,
  type ProxyHandler,
} from './gateway';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { plansInForce, regionalPlans, type Plans } from '../../shared/plans';
import { asInvocation } from './invocation';
import { loadHandlerFactories, type HandlerDependencies, type HandlerFactory } from './handler-modules';
import { followKeyChanges, type KeyChanges } from './key-changes';
import { BODIES_IN_FLIGHT_MAX_BYTES, createBodyBudget, KEY_SHARE_OF_BODIES_IN_FLIGHT, type BodyBudget } from './body-budget';

export interface LocalServerOptions {
  readonly client: DynamoDBDocumentClient;
  readonly port?: number;
  readonly host?: string;
  readonly tables: TableNames;
  readonly authCacheTtlSeconds?: number;
  /**
   * Whether the gateway drops a changed key's cached answers itself, as it reads the keys table's
   * stream. @default true. Off, only a flush of the whole cache drops them (`flushAuthorizerCache`,
   * which the local audit trail calls after a key change, as each region's key-audit function
   * flushes its stage deployed).
   */
  readonly dropChangedKeys?: boolean;
  /** How long the health route reuses its answer, as each deployed execution environment does; 0: it reads every time. */
  readonly healthReuseSeconds?: number;
  readonly throttle?: GatewayOptions['throttle'];
  /** The stage's usage plans; by default those in force (PLANS_FILE, else shared/plans.ts). */
  readonly plans?: Plans;
  /**
   * How many regions the stage this server stands for runs in: each key is metered on the plans as
   * one of them meters them (regionalPlans: each quota split evenly over them). @default 1
   */
  readonly regionCount?: number;
  /** Tests only: the one clock of the gateway (throttle, authorizer cache) and the functions (sunset, key expiry, last use). */
  readonly now?: Clock;
  /** Tests only: the pets repository's id generator, to force an id collision. */
  readonly newPetId?: IdGenerator;
  /**
   * Tests only: how long the authorizer's read and write of a key's last use may each take; by
   * default LAST_USE_DEADLINE_MS, which a DynamoDB Local on a busy machine can miss.
   */
  readonly lastUseDeadlineMs?: number;
  /**
   * The bytes of request bodies the server holds at once; by default BODIES_IN_FLIGHT_MAX_BYTES. A
   * key holds at most a quarter of it besides its largest body (body-budget.ts).
   */
  readonly maxBodyBytesInFlight?: number;
  /** Seconds a body has to arrive whole once the gateway reads it; by default BODY_TIMEOUT_SECONDS. */
  readonly bodyTimeoutSeconds?: number;
  /** Where the gateway's access lines go (the stage's access log); by default nowhere. */
  readonly accessLog?: GatewayOptions['accessLog'];
  /** Where each key's use per day is recorded for the key tool; nowhere when absent. */
  readonly usageLog?: GatewayOptions['usageLog'];
}

export { BODIES_IN_FLIGHT_MAX_BYTES } from './body-budget';

/**
 * Seconds a body has to arrive whole once the gateway reads it, by default: plenty for 10 MB on a
 * local network, and a bound on how long a client that stalls mid-body holds its share.
 */
export const BODY_TIMEOUT_SECONDS = 10;

/**
 * An unread body up to this size is read and dropped after the answer, keeping the connection
 * (a client's small POST with a bad key); a larger one, or one of unknown length, is not read at
 * all: the connection is closed after the answer.
 */
const UNREAD_BODY_DRAINED_BYTES = 64 * 1024;

export interface LocalServer {
  /** Base URL of the API, ending in /v1. */
  readonly url: string;
  readonly port: number;
  /** Empties the gateway's authorizer cache, as FlushStageAuthorizersCache empties a stage's. */
  flushAuthorizerCache(): void;
  close(): Promise<void>;
}

/** Each route's handler module, built with the given dependencies, run as its own function's invocation. */
const loadHandlers = async (dependencies: HandlerDependencies, tables: TableNames) => {
  const factories = Object.entries(await loadHandlerFactories()) as Array<[string, HandlerFactory]>;
  return Object.fromEntries(
    factories.map(([operationId, createHandler]) => [
      operationId,
      asInvocation({ functionName: operationId, tables }, createHandler(dependencies)),
    ]),
  );
};

export const startLocalServer = async ({
  client,
  port = 3000,
  host = '127.0.0.1',
  tables,
  authCacheTtlSeconds = DEFAULT_AUTH_CACHE_TTL_SECONDS,
  dropChangedKeys = true,
  healthReuseSeconds = HEALTH_REUSE_SECONDS,
  throttle,
  plans: stagePlans = plansInForce(),
  regionCount = 1,
  now,
  newPetId,
  lastUseDeadlineMs,
  maxBodyBytesInFlight = BODIES_IN_FLIGHT_MAX_BYTES,
  bodyTimeoutSeconds = BODY_TIMEOUT_SECONDS,
  accessLog,
  usageLog,
}: LocalServerOptions): Promise<LocalServer> => {
  const repositories = repositoriesFor(client, tables, { newPetId });
  const plans = regionalPlans(stagePlans, regionCount);
  // The server's own address, known once it listens: the host of the URLs the API writes.
  let ownAddress = host;
  const gateway = createGateway({
    handlers: await loadHandlers(
      { ...repositories, now, health: reusedFor(databaseHealth({ client, tables }), healthReuseSeconds) },
      tables,
    ),
    // The authorizer as the stack configures it: with the plans, for RateLimit-Policy.
    authorizer: asInvocation(
      { functionName: 'authorizer', tables },
      createAuthorizer({ keys: apiKeysRepository({ client, tables, lastUseDeadlineMs }), now, plans }),
    ),
    authCacheTtlSeconds,
    throttle,
    plans,
    now,
    domainName: () => ownAddress,
    accessLog,
    usageLog,
  });

  // A cached answer goes when its key's item changes, as the key tool's flush of API Gateway's cache does deployed.
  const keyChanges: KeyChanges | undefined =
    authCacheTtlSeconds > 0 && dropChangedKeys
      ? await followKeyChanges({
          client,
          keysTableName: tables.apiKeys,
          onChange: gateway.keyChanged,
          onFollowing: gateway.followingKeyChanges,
        })
      : undefined;

  const documentation = createDocumentation();
  const bodiesInFlight = createBodyBudget(maxBodyBytesInFlight, maxBodyBytesInFlight * KEY_SHARE_OF_BODIES_IN_FLIGHT);
  const bodyTimeoutMs = bodyTimeoutSeconds * 1_000;

  // The connections whose request is being answered: one that ends mid-body is a client gone, not bad HTTP.
  const answering = new WeakSet<Duplex>();

  const server = createServer(async (req, res) => {
    // Node stops parsing a connection that asked for an Upgrade, which is never granted here: a
    // further request on it would wait unanswered until the idle timeout. Close it after this one.
    if (req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
    const page = documentation(req.method ?? 'GET', req.url ?? '/');
    if (page) {
      const requestId = randomUUID();
      logger.info('docs', { requestId, path: page.path, status: page.statusCode });
      res.writeHead(page.statusCode, { ...page.headers, [GATEWAY_REQUEST_ID_HEADER]: requestId });
      return void res.end(page.body);
    }
    answering.add(req.socket);
    res.once('close', () => answering.delete(req.socket));
    const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
    const body = requestBody(req, bodiesInFlight, bodyTimeoutMs);
    // What the body holds of the budget is given back once the answer is sent (or the client gone).
    res.once('close', body.release);
    let result: APIGatewayProxyResult;
    try {
      result = await gateway({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: headerPairs(req.rawHeaders),
        readBody: body.read,
        sourceIp,
      });
      // The client went away mid-request: no one to answer (the gateway wrote the access line).
      if (req.socket.destroyed) return void res.destroy();
      // A body left unread is not read now either, unless it is small: the connection closes instead.
      if (!body.drainable()) res.shouldKeepAlive = false;
    } catch (error) {
      if (req.socket.destroyed) return void res.destroy(); // the client went away mid-request
      const requestId = randomUUID();
      logger.error('local server', { requestId, status: 500, ...safeErrorFields(error) });
      result = withGatewayRequestId(withCommonHeaders(errorResponse('internal_error'), requestId), requestId);
    }
    res.writeHead(
      result.statusCode,
      Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)])),
    );
    res.end(result.body);
  });
  // Requests Node cannot parse as HTTP still get an answer in the Error shape.
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    // The client sent a request's head and went away mid-body: its request's access line says so.
    if (error.code === 'HPE_INVALID_EOF_STATE' && answering.has(socket)) return void socket.destroy();
    const requestId = randomUUID();
    const answer = withCommonHeaders(errorResponse('validation_failed', 'The request is not valid HTTP.'), requestId);
    logger.info('local server', { requestId, status: answer.statusCode, errorCode: 'validation_failed', reason: 'not HTTP' });
    // An answer to HEAD has no body (RFC 9110), even when the rest of the request was not HTTP.
    const toHead = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    answerAndClose(socket, withGatewayRequestId(answer, requestId), 'Bad Request', toHead);
  });
  // CONNECT asks for a tunnel: Node hands it to this event, and without a listener drops the
  // connection unanswered. No route has the method, so it gets the gateway's 404 like any other.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const requestId = randomUUID();
    const answer = gatewayAnswer('MISSING_AUTHENTICATION_TOKEN');
    logger.info('gateway', { requestId, gatewayResponse: 'MISSING_AUTHENTICATION_TOKEN', status: answer.statusCode });
    answerAndClose(socket, withGatewayRequestId(answer, requestId), 'Not Found');
  });
  server.listen(port, host);
  try {
    await once(server, 'listening');
  } catch (error) {
    await keyChanges?.stop();
    throw error;
  }
  const address = server.address() as AddressInfo;
  ownAddress = `${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  return {
    url: `http://${ownAddress}/v1`,
    port: address.port,
    flushAuthorizerCache: gateway.flushAuthorizerCache,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await Promise.all([once(server, 'close'), keyChanges?.stop()]);
    },
  };
};

/** Writes an answer straight onto a socket Node's HTTP server does not answer itself, then closes it. */
const answerAndClose = (socket: Duplex, { statusCode, headers, body }: APIGatewayProxyResult, statusText: string, toHead = false) => {
  const head = Object.entries({ ...headers, 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${statusCode} ${statusText}\r\n${head}\r\n\r\n${toHead ? '' : body}`);
};

const headerPairs = (raw: string[]): Array<readonly [string, string]> => {
  const pairs: Array<readonly [string, string]> = [];
  for (let index = 0; index + 1 < raw.length; index += 2) pairs.push([raw[index] ?? '', raw[index + 1] ?? '']);
  return pairs;
};

/** A request's body, read only when the gateway asks for it. */
interface RequestBody {
  /** Its bytes as sent, or why they were not read; held as `holder`'s (the key's id). */
  read(holder: string): Promise<Buffer | BodyRefusal>;
  /** Whether what is left unread of it may be read and dropped after the answer (none left, or little, and no reason to stop). */
  drainable(): boolean;
  /** Gives back what it holds of the budget. */
  release(): void;
}

/**
 * The body's bytes as sent (never decoded here: the handler decides what they mean), held within
 * the budget: a declared length is taken from it whole before a byte is read, a body of unknown
 * length as it arrives. Past API Gateway's limit, the budget or the key's share of it, or the
 * deadline, or when the client goes away, reading stops and the answer says why; the rest of the
 * body is never read (the connection closes after the answer).
 */
const requestBody = (req: IncomingMessage, budget: BodyBudget, timeoutMs: number): RequestBody => {
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  // RFC 9112: without Content-Length or Transfer-Encoding a request has no body (most GETs).
  const framed = req.headers['transfer-encoding'] !== undefined || (declared ?? 0) > 0;
  /** This body, as the budget tells it from the key's others. */
  const body = {};
  let holderOfHeld = '';
  let complete = !framed;
  // Reading stopped part-way (a deadline, a limit, a client gone): what is left is not waited for.
  let stopped = false;
  const release = () => budget.give(holderOfHeld, body);
  const take = (holder: string, bytes: number) => {
    const refusal = budget.take(holder, body, bytes);
    if (refusal) return refusal;
    holderOfHeld = holder;
    return undefined;
  };
  const read = (holder: string): Promise<Buffer | BodyRefusal> => {
    if (!framed) return Promise.resolve(Buffer.alloc(0));
    if (req.destroyed) return Promise.resolve('CLIENT_CLOSED');
    const refused = declared === undefined ? undefined : take(holder, declared);
    if (refused) return Promise.resolve(refused);
    return new Promise((resolveBody) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (outcome: Buffer | BodyRefusal) => {
        clearTimeout(deadline);
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('close', onClose);
        resolveBody(outcome);
      };
      const stop = (refusal: BodyRefusal) => {
        stopped = true;
        req.pause();
        chunks.length = 0;
        release();
        finish(refusal);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > GATEWAY_MAX_BODY_BYTES) return stop('REQUEST_TOO_LARGE');
        const refusal = declared === undefined ? take(holder, chunk.length) : undefined;
        if (refusal) return stop(refusal);
        chunks.push(chunk);
      };
      const onEnd = () => {
        complete = true;
        finish(Buffer.concat(chunks));
      };
      // Closed before its end: the client went away (an error, such as a reset, comes with the close).
      const onClose = () => stop('CLIENT_CLOSED');
      const deadline = setTimeout(() => stop('BODY_TIMEOUT'), timeoutMs);
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('close', onClose);
      req.on('error', () => undefined);
    });
  };
  return {
    read,
    drainable: () => complete || (!stopped && declared !== undefined && declared <= UNREAD_BODY_DRAINED_BYTES),
    release,
  };
};
