/**
 * Every Velocity mapping template of the synthesized API, rendered as API Gateway renders it
 * (test/support/velocity.ts): each integration request and response template of every method,
 * and each gateway response's. Each is tried with no Origin, every allowed origin in both header
 * casings (HTTP/2 clients send `origin`), and foreign origins. A body must be JSON, and only an
 * allowed origin may be told it can read the answer.
 */
import { describe, expect, it } from 'vitest';
import { renderMappingTemplate, type TemplateRequest } from '../support/velocity';
import { methodsOf, resourcesOf, synthStage } from './synth';

const ALLOW_ORIGIN = 'Access-Control-Allow-Origin';
const FOREIGN_ORIGIN = 'https://evil.example.net';

interface MappingTemplate {
  /** Where it comes from, for messages: `OPTIONS /pets response 204`, `gateway UNAUTHORIZED`. */
  readonly name: string;
  readonly kind: 'request' | 'response' | 'gateway';
  readonly text: string;
  /** A method's response: its status. A request: the statuses its integration answers with. */
  readonly statuses: readonly string[];
  /** A method response's static header values, quotes removed; none for the others. */
  readonly staticHeaders: Readonly<Record<string, string>>;
}

interface IntegrationProperties {
  readonly RequestTemplates?: Record<string, string>;
  readonly IntegrationResponses?: ReadonlyArray<{
    readonly StatusCode: string;
    readonly ResponseParameters?: Record<string, string>;
    readonly ResponseTemplates?: Record<string, string>;
  }>;
}

/** A static header value as API Gateway writes it, `'…'`; anything else is not expected on a method response. */
const unquoted = (name: string, value: string): string => {
  const match = /^'(.*)'$/s.exec(value);
  if (match === null) throw new Error(`${name}: ${value} is not a static value`);
  return match[1] ?? '';
};

/** Every mapping template in the synthesized template, found there rather than listed by hand. */
const mappingTemplatesOf = (template: ReturnType<typeof synthStage>['template']): MappingTemplate[] => {
  const found: MappingTemplate[] = [];
  for (const { method, path, properties } of methodsOf(template)) {
    const integration = (properties.Integration ?? {}) as IntegrationProperties;
    const where = `${method} ${path || '/'}`;
    const responses = integration.IntegrationResponses ?? [];
    for (const [contentType, text] of Object.entries(integration.RequestTemplates ?? {})) {
      const statuses = responses.map(({ StatusCode }) => StatusCode);
      found.push({ name: `${where} request ${contentType}`, kind: 'request', text, statuses, staticHeaders: {} });
    }
    for (const response of responses) {
      const staticHeaders = Object.fromEntries(
        Object.entries(response.ResponseParameters ?? {}).map(([parameter, value]) => {
          const header = parameter.replace(/^method\.response\.header\./, '');
          return [header, unquoted(`${where} ${header}`, value)];
        }),
      );
      for (const [contentType, text] of Object.entries(response.ResponseTemplates ?? {})) {
        found.push({
          name: `${where} response ${response.StatusCode} ${contentType}`,
          kind: 'response',
          text,
          statuses: [response.StatusCode],
          staticHeaders,
        });
      }
    }
  }
  for (const { properties } of resourcesOf(template, 'AWS::ApiGateway::GatewayResponse')) {
    const { ResponseType, StatusCode, ResponseTemplates } = properties as {
      ResponseType: string;
      StatusCode?: string;
      ResponseTemplates?: Record<string, string>;
    };
    for (const [contentType, text] of Object.entries(ResponseTemplates ?? {})) {
      found.push({
        name: `gateway ${ResponseType} ${contentType}`,
        kind: 'gateway',
        text,
        statuses: StatusCode === undefined ? [] : [StatusCode],
        staticHeaders: {},
      });
    }
  }
  return found;
};

interface Caller {
  readonly label: string;
  readonly request: TemplateRequest;
  /** The origin the request names, if any, and whether the stage allows it. */
  readonly origin?: string;
  readonly allowed: boolean;
}

const callersFor = (origins: readonly string[]): Caller[] => [
  { label: 'no Origin', request: {}, allowed: false },
  ...origins.flatMap((origin) =>
    ['Origin', 'origin'].map((header) => ({
      label: `${header}: ${origin}`,
      request: { headers: { [header]: origin } },
      origin,
      allowed: true,
    })),
  ),
  ...['Origin', 'origin'].map((header) => ({
    label: `${header}: ${FOREIGN_ORIGIN} (foreign)`,
    request: { headers: { [header]: FOREIGN_ORIGIN } },
    origin: FOREIGN_ORIGIN,
    allowed: false,
  })),
];

const headerIn = (headers: Readonly<Record<string, string>>, name: string): string | undefined =>
  Object.entries(headers).find(([header]) => header.toLowerCase() === name.toLowerCase())?.[1];

/** What is wrong with one template's rendering for one caller: nothing, when all is well. */
const problemsWith = (template: MappingTemplate, caller: Caller, origins: readonly string[]): string[] => {
  const problems: string[] = [];
  const rendered = renderMappingTemplate(template.text, caller.request);
  const output = rendered.output.trim();

  if (template.kind === 'request') {
    // A request template's output is what the integration receives; a mock reads the status from it.
    let statusCode: unknown;
    try {
      statusCode = (JSON.parse(output) as { statusCode?: unknown }).statusCode;
    } catch {
      return [`${template.name}: renders ${JSON.stringify(output)}, not JSON`];
    }
    if (template.statuses.length > 0 && !template.statuses.includes(String(statusCode))) {
      problems.push(
        `${template.name}: names status ${String(statusCode)}, not one its integration answers (${template.statuses.join(', ')})`,
      );
    }
  } else if (template.statuses.includes('204')) {
    if (output !== '') problems.push(`${template.name}: a 204 with the body ${JSON.stringify(output)}`);
  } else {
    try {
      JSON.parse(output);
    } catch {
      problems.push(`${template.name}: renders ${JSON.stringify(output)}, not JSON`);
    }
  }

  const overridden = headerIn(rendered.headerOverrides, ALLOW_ORIGIN);
  // What the browser gets: the template's override, else the method response's static value.
  const answered = overridden ?? headerIn(template.staticHeaders, ALLOW_ORIGIN);
  const allowedHere = caller.allowed ? caller.origin : undefined;
  if (overridden !== undefined && overridden !== allowedHere) {
    problems.push(`${template.name}: sets ${ALLOW_ORIGIN} ${overridden} for ${caller.label}`);
  }
  // A gateway response's Access-Control-Allow-Origin is a header mapping, checked in
  // gateway-responses.test.ts; its template is held to the rule above only.
  if (template.kind === 'response') {
    // With one origin, naming it to every caller is allowed: it tells a foreign origin nothing.
    const acceptable = allowedHere !== undefined ? [allowedHere] : origins.length === 1 ? [undefined, origins[0]] : [undefined];
    if (!acceptable.includes(answered)) problems.push(`${template.name}: answers ${ALLOW_ORIGIN} ${String(answered)} for ${caller.label}`);
  }
  const foreign = caller.allowed ? undefined : caller.origin;
  if (foreign !== undefined) {
    const echoed = [rendered.output, ...Object.values(rendered.headerOverrides)].some((text) => text.includes(foreign));
    if (echoed) problems.push(`${template.name}: echoes the foreign origin of ${caller.label}`);
  }
  return problems;
};

const ORIGIN_SETS: ReadonlyArray<readonly string[]> = [
  [],
  ['https://app.example.com'],
  ['https://app.example.com', 'https://admin.example.com'],
  ['https://app.example.com', 'https://admin.example.com', 'https://third.example.org'],
];

describe.each(ORIGIN_SETS.map((origins) => [origins.length, origins] as const))('mapping templates, %i allowed origins', (_, origins) => {
  const { template } = synthStage('staging', { corsAllowedOrigins: origins });
  const templates = mappingTemplatesOf(template);

  it("finds the templates in the synthesized API, the 501's and every preflight's among them", () => {
    expect(templates.length).toBeGreaterThan(0);
    const names = templates.map(({ name }) => name);
    expect(names).toContainEqual(expect.stringMatching(/^GET \/store\/orders response 501 /));
    expect(names).toContainEqual(expect.stringMatching(/^gateway UNAUTHORIZED /));
    // With origins, every resource (the root too) has a preflight, and its templates are among those checked.
    const preflights = methodsOf(template).filter(({ method }) => method === 'OPTIONS');
    const resources = resourcesOf(template, 'AWS::ApiGateway::Resource').length + 1;
    expect(preflights.length).toBe(origins.length === 0 ? 0 : resources);
    for (const { path } of preflights)
      expect(
        names.some((name) => name.startsWith(`OPTIONS ${path || '/'} `)),
        path,
      ).toBe(true);
  });

  it.each(callersFor(origins).map((caller) => [caller.label, caller] as const))(
    'renders every template as JSON, and allows only an allowed origin: %s',
    (_label, caller) => {
      expect(templates.flatMap((each) => problemsWith(each, caller, origins))).toEqual([]);
    },
  );
});
