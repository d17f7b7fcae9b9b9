/**
 * The offline renderer of API Gateway mapping templates (test/support/velocity.ts) behaves as
 * API Gateway's Velocity 1.7 does where the stack's templates depend on it.
 */
import { describe, expect, it } from 'vitest';
import { renderMappingTemplate, STAND_IN_REQUEST_ID } from '../support/velocity';

describe('mapping template renderer', () => {
  it('keeps a variable as it was when #set is given null, as Velocity 1.7 does', () => {
    const template = '#set($origin = "kept")#set($origin = $input.params().header.get("Origin"))[$origin]';
    expect(renderMappingTemplate(template).output).toBe('[kept]');
    expect(renderMappingTemplate(template, { headers: { Origin: 'https://a.example' } }).output).toBe('[https://a.example]');
    const header = '#set($context.responseOverride.header.X-Seen = $input.params().header.get("X-Absent"))';
    expect(renderMappingTemplate(header).headerOverrides).toEqual({});
  });

  it("looks a header up in exactly the casing asked for, as API Gateway's header map does", () => {
    const template = '#if($input.params().header.get("Origin"))found#{else}absent#end';
    expect(renderMappingTemplate(template, { headers: { origin: 'https://a.example' } }).output).toBe('absent');
    expect(renderMappingTemplate(template, { headers: { Origin: 'https://a.example' } }).output).toBe('found');
  });

  it('reports the headers and status a template sets through $context.responseOverride', () => {
    const rendered = renderMappingTemplate(
      '#set($context.responseOverride.header.X-Request-Id = $context.requestId)#set($context.responseOverride.status = 418){}',
    );
    expect(rendered.output).toBe('{}');
    expect(rendered.headerOverrides).toEqual({ 'X-Request-Id': STAND_IN_REQUEST_ID });
    expect(rendered.statusOverride).toBe(418);
  });

  it('reads the body with $input and escapes with $util, and refuses a JSONPath it does not know', () => {
    const request = { body: '{"name":"Rex","tags":["a"]}' };
    expect(renderMappingTemplate(`{"name":$input.json('$.name'),"raw":"$util.escapeJavaScript($input.body)"}`, request).output).toBe(
      '{"name":"Rex","raw":"{\\"name\\":\\"Rex\\",\\"tags\\":[\\"a\\"]}"}',
    );
    expect(renderMappingTemplate(`$util.escapeJavaScript("it's a/b")`).output).toBe("it\\'s a\\/b");
    expect(() => renderMappingTemplate(`$input.json('$.tags[0]')`, request)).toThrow(/does not know the JSONPath/);
  });
});
