/** The Logs Insights reader the saved-query tests rely on: the fields a query reads, and which lines its filters pass. */
import { describe, expect, it } from 'vitest';
import { fieldsMissingFrom, fieldsOf, matchesFilterPattern, passesFilters } from '../support/logs-insights';

describe('fieldsOf', () => {
  it('names every field a command reads, and no keyword, function, alias, string or built-in field', () => {
    const query =
      'fields @timestamp, @log, status, `by` | filter ispresent(errorCode) and level = "ERROR" and code in ["a", "b"] ' +
      '| stats count(*) as errors, pct(record.metrics.durationMs, 99) as p99 by operation | sort errors desc | limit 5';
    expect(fieldsOf(query).sort()).toEqual(['by', 'code', 'errorCode', 'level', 'operation', 'record.metrics.durationMs', 'status'].sort());
  });

  it('refuses what is not in the subset, rather than read it wrongly', () => {
    expect(() => fieldsOf('parse @message "* *" as a, b')).toThrow('Not a command of the subset');
    expect(() => fieldsOf('filter a =~ /x/')).toThrow('Not in the Logs Insights subset');
  });

  it('finds a field missing from every line, nested ones by their path', () => {
    const lines = [{ a: 1, record: { metrics: { durationMs: 2 } } }, { b: 'x' }];
    expect(fieldsMissingFrom('fields a, b, c, record.metrics.durationMs, record.metrics.initDurationMs', lines)).toEqual([
      'c',
      'record.metrics.initDurationMs',
    ]);
  });
});

describe('passesFilters', () => {
  it('applies every filter command: =, !=, in, ispresent and and, comparing values by type', () => {
    const query = 'filter ispresent(keyId) and status != "200" | filter gatewayResponse in ["THROTTLED", "QUOTA_EXCEEDED"]';
    expect(passesFilters(query, { keyId: 'k', status: '429', gatewayResponse: 'THROTTLED' })).toBe(true);
    expect(passesFilters(query, { keyId: 'k', status: '200', gatewayResponse: 'THROTTLED' })).toBe(false);
    expect(passesFilters(query, { status: '429', gatewayResponse: 'THROTTLED' })).toBe(false);
    expect(passesFilters(query, { keyId: 'k', status: '429', gatewayResponse: '-' })).toBe(false);
    expect(passesFilters('filter status = 429', { status: '429' })).toBe(false);
    expect(passesFilters('filter status = 429', { status: 429 })).toBe(true);
  });
});

describe('matchesFilterPattern', () => {
  it("reads CloudWatch Logs' JSON patterns joined by && or ||", () => {
    expect(matchesFilterPattern('{ $.gatewayResponse = "THROTTLED" }', { gatewayResponse: 'THROTTLED' })).toBe(true);
    expect(matchesFilterPattern('{ ($.a = "x") || ($.a = "y") }', { a: 'y' })).toBe(true);
    expect(matchesFilterPattern('{ ($.a != "x") && ($.a != "y") }', { a: 'y' })).toBe(false);
    expect(matchesFilterPattern('{ $.status = 429 }', { status: '429' })).toBe(false);
    expect(() => matchesFilterPattern('{ $.a = "x" && $.b = "y" || $.c = "z" }', {})).toThrow('Mixed');
  });
});
