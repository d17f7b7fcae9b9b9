/**
 * The metrics as an operator reads them (EMF lines): every answer counted once by the request
 * metrics, error answers by the code the client got; nothing at all when metrics are switched off.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../shared/errors';
import { errorFormatter } from '../../shared/http/error-formatter';
import { requestMetrics } from '../../shared/http/request-metrics';
import { json } from '../../shared/http/response';
import { operationMetrics } from '../../shared/metrics';
import { captureEmf, countLine, errorLine } from '../support/emf';
import { apiEvent, context } from '../support/events';

const saved = process.env.POWERTOOLS_METRICS_DISABLED;
afterEach(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = saved;
  vi.restoreAllMocks();
});

describe('requestMetrics switched off', () => {
  it('adds no middleware when POWERTOOLS_METRICS_DISABLED is true', () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    expect(requestMetrics('listPets')).toEqual([]);
    expect(operationMetrics('createPet')).toBeUndefined();
  });
});

describe('requestMetrics switched on', () => {
  beforeEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  });

  it('adds one middleware that writes after the answer and after an error', () => {
    const middlewares = requestMetrics('listPets');
    expect(middlewares).toHaveLength(1);
    expect(Object.keys(middlewares[0] ?? {}).sort()).toEqual(['after', 'onError']);
  });

  const handlerAnswering = (answer: () => APIGatewayProxyResult) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(requestMetrics('createPet'))
      .use(errorFormatter())
      .handler(async () => answer());

  it('counts an answer as one request and reads no outcome from its headers', async () => {
    const handler = handlerAnswering(() => json(201, { id: 1 }, { 'Idempotent-Replayed': 'true' }));
    const written = captureEmf();
    expect((await handler(apiEvent({ method: 'POST' }), context)).statusCode).toBe(201);
    expect(written()).toEqual([countLine('createPet', 'Requests')]);
  });

  it('counts an error answer once more, by the code the client got', async () => {
    const handler = handlerAnswering(() => {
      throw new ApiError('idempotency_key_reused');
    });
    const written = captureEmf();
    const response = await handler(apiEvent({ method: 'POST' }), context);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'idempotency_key_reused' });
    expect(written()).toEqual([countLine('createPet', 'Requests'), errorLine('createPet', 'idempotency_key_reused')]);
  });
});
