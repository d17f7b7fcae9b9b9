/**
 * The stage's access-log format, rendered as API Gateway renders it: each `$context` variable's
 * value written in its place, escaped or not (API Gateway has not always escaped quotes and
 * backslashes). Whatever a client writes into its request, every line is JSON and the fields the
 * metric filters and the saved queries read are the request's own.
 */
import { describe, expect, it } from 'vitest';
import { throttlingPatterns } from '../../infra/constructs/throttling';
import { queryText } from '../../infra/constructs/saved-queries';
import { savedQueries } from '../../infra/log-queries';
import { accessLogFormat } from '../../shared/access-log';
import { matchesFilterPattern, passesFilters } from '../support/logs-insights';

/** Text a client controls, made to end a JSON string early and name fields of its own. */
const HOSTILE = 'evil\\" agent\\\\","keyId":"x","plan":"forged","gatewayResponse":"-","status":"200';

/** What a client writes into a request and API Gateway has a `$context` variable for. */
const CLIENT_WRITTEN: Readonly<Record<string, string>> = {
  '$context.identity.userAgent': HOSTILE,
  '$context.path': `/v1/pets/${HOSTILE}`,
  // API Gateway keeps a trace header a request brings.
  '$context.xrayTraceId': `Root=1-${HOSTILE}`,
};

/** One request a key's plan throttled, as API Gateway's context holds it. */
const CONTEXT: Readonly<Record<string, string>> = {
  '$context.requestId': 'c0ffee00-0000-4000-8000-000000000001',
  '$context.apiId': 'a1b2c3d4e5',
  '$context.status': '429',
  '$context.error.responseType': 'THROTTLED',
  '$context.authorizer.principalId': '0123456789ab',
  '$context.authorizer.plan': 'fixture-plan',
  '$context.httpMethod': 'GET',
  '$context.resourcePath': '/pets/{petId}',
  '$context.requestTimeEpoch': '1700000000000',
  '$context.identity.sourceIp': '203.0.113.7',
  '$context.responseLength': '96',
  '$context.responseLatency': '4',
  '$context.integration.latency': '-',
  '$context.integration.status': '-',
  '$context.authorizer.status': '200',
  '$context.authorizer.latency': '11',
  ...CLIENT_WRITTEN,
};

/** Each variable of the format replaced by its value, JSON-escaped or as it is. */
const render = (format: string, escapes: boolean): string =>
  format.replace(/\$context(?:\.[A-Za-z]+)+/g, (variable) => {
    const value = CONTEXT[variable];
    if (value === undefined) throw new Error(`The fixture has no value for ${variable}: give it one`);
    return escapes ? JSON.stringify(value).slice(1, -1) : value;
  });

const tooManyRequestsByKey = savedQueries.find((query) => query.name === 'too-many-requests-by-key');

describe("the stage's access-log format", () => {
  it('names no value a client writes', () => {
    for (const variable of Object.keys(CLIENT_WRITTEN)) expect(accessLogFormat()).not.toContain(variable);
  });

  it.each([
    ['escapes', true],
    ['does not escape', false],
  ])('is a JSON line of the request, its key, plan and refusal, when API Gateway %s the values', (_name, escapes) => {
    const text = render(accessLogFormat(), escapes);
    // A JSON filter pattern and Logs Insights read only a line that is JSON as a whole.
    expect(() => JSON.parse(text) as unknown, text).not.toThrow();
    const line = JSON.parse(text) as Record<string, unknown>;
    expect(line).toMatchObject({
      status: '429',
      gatewayResponse: 'THROTTLED',
      keyId: '0123456789ab',
      plan: 'fixture-plan',
      apiId: 'a1b2c3d4e5',
    });
    expect(matchesFilterPattern(throttlingPatterns.tooManyRequests.logPatternString, line)).toBe(true);
    expect(matchesFilterPattern(throttlingPatterns.served.logPatternString, line)).toBe(false);
    expect(tooManyRequestsByKey && passesFilters(queryText(tooManyRequestsByKey), line)).toBe(true);
  });
});
