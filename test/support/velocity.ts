/**
 * API Gateway's mapping templates, rendered offline: velocityjs with Velocity 1.7's rule for a
 * `#set` from null, and a stand-in for the `$input`, `$context` and `$util` a template is given.
 * The stand-in covers what the stack's templates use and a little more; what it does not know
 * it refuses, rather than guess what API Gateway would do.
 */
import { Compile, parse } from 'velocityjs';

type TemplateNode = ReturnType<typeof parse>[number];
type SetNode = Extract<TemplateNode, { type: 'set' }>;

/**
 * velocityjs assigns whatever the right side of `#set` yields. Velocity 1.7, which API Gateway
 * runs, leaves the variable as it was when that is null: templates rely on it (an empty string
 * set first survives a lookup that finds nothing), so render with that rule.
 */
class Velocity17 extends Compile {
  protected override setValue(ast: SetNode): void {
    const [, right] = ast.equal;
    // The right side is evaluated again by the assignment itself; the stand-ins have no side effects.
    const value: unknown = right.type === 'math' ? this.getExpression(right) : this.getLiteral(right);
    if (value === null || value === undefined) return;
    super.setValue(ast);
  }
}

/** The request a template is rendered for. */
export interface TemplateRequest {
  /** Header names as the client sent them: `$input.params().header.get` is exact-case. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly pathParameters?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly httpMethod?: string;
  readonly resourcePath?: string;
}

export interface RenderedTemplate {
  readonly output: string;
  /** What the template set with `#set($context.responseOverride.header.<name> = …)`. */
  readonly headerOverrides: Readonly<Record<string, string>>;
  /** What it set with `#set($context.responseOverride.status = …)`, if anything. */
  readonly statusOverride: number | undefined;
}

/** The request id the stand-in's `$context.requestId` holds. */
export const STAND_IN_REQUEST_ID = 'c0ffee00-0000-4000-8000-000000000001';

/** A Java map as a template sees it: `get` is exact-case and null for an absent key. */
const javaMap = (entries: Readonly<Record<string, string>>) => ({
  get: (name: string): string | null => entries[name] ?? null,
  containsKey: (name: string): boolean => Object.hasOwn(entries, name),
  keySet: (): string[] => Object.keys(entries),
  size: (): number => Object.keys(entries).length,
});

/** The JSONPath API Gateway's `$input.json` and `$input.path` take: only `$` and `$.a.b` here. */
const atPath = (document: unknown, path: string): unknown => {
  if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path)) throw new Error(`The template stand-in does not know the JSONPath ${path}`);
  let value = document;
  for (const name of path.split('.').slice(1)) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
  }
  return value ?? null;
};

const inputOf = (request: TemplateRequest) => {
  const body = request.body ?? '';
  // API Gateway reads an empty body as an empty object.
  const document = (): unknown => (body.trim() === '' ? {} : JSON.parse(body));
  const params = {
    path: javaMap(request.pathParameters ?? {}),
    querystring: javaMap(request.query ?? {}),
    header: javaMap(request.headers ?? {}),
  };
  return {
    body,
    json: (path: string): string => JSON.stringify(atPath(document(), path)),
    path: (path: string): unknown => atPath(document(), path),
    // With a name, the path, then the query string, then the headers are searched, in that order.
    params: (name?: string) =>
      name === undefined ? params : (params.path.get(name) ?? params.querystring.get(name) ?? params.header.get(name) ?? ''),
  };
};

/** `$util`: JavaScript escaping as Apache Commons' escapeEcmaScript does it (quotes, slash, controls). */
const util = {
  escapeJavaScript: (text: string): string => JSON.stringify(text).slice(1, -1).replaceAll("'", "\\'").replaceAll('/', '\\/'),
  urlEncode: (text: string): string => encodeURIComponent(text),
  urlDecode: (text: string): string => decodeURIComponent(text),
  base64Encode: (text: string): string => Buffer.from(text, 'utf8').toString('base64'),
  base64Decode: (text: string): string => Buffer.from(text, 'base64').toString('utf8'),
  parseJson: (text: string): unknown => JSON.parse(text),
};

/** Renders one mapping template as API Gateway would for the request. */
export const renderMappingTemplate = (template: string, request: TemplateRequest = {}): RenderedTemplate => {
  const responseOverride: { header: Record<string, unknown>; status?: unknown } = { header: {} };
  const context = {
    input: inputOf(request),
    util,
    context: {
      requestId: STAND_IN_REQUEST_ID,
      extendedRequestId: 'Yx1AbCdEfGhIjKl=',
      httpMethod: request.httpMethod ?? 'GET',
      resourcePath: request.resourcePath ?? '/',
      stage: 'v1',
      requestTimeEpoch: 1_700_000_000_000,
      identity: { sourceIp: '192.0.2.10', userAgent: 'velocity-check' },
      responseOverride,
    },
  };
  const output = new Velocity17(parse(template)).render(context);
  return {
    output,
    headerOverrides: Object.fromEntries(Object.entries(responseOverride.header).map(([name, value]) => [name, String(value)])),
    statusOverride: responseOverride.status === undefined ? undefined : Number(responseOverride.status),
  };
};
