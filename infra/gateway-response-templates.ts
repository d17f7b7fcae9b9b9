/**
 * API Gateway's gateway responses, rendered from the shared gateway answers: the status, the
 * headers as quoted static values, and the Error body as the JSON template. With CORS origins,
 * browsers may read these errors too.
 */
import { gatewayAnswer, keepsStatus, type GatewayResponseType } from '../shared/gateway-responses';
import { CORS_EXPOSED_HEADERS } from '../shared/http/cors';

export interface GatewayResponseTemplate {
  /** Absent for the catch-alls: API Gateway then keeps the status of the type they stand in for. */
  readonly statusCode?: string;
  /** Header name → a quoted static value (`'…'`) or a request parameter (`method.request.header.…`). */
  readonly responseHeaders: Record<string, string>;
  readonly templates: Record<string, string>;
}

/**
 * The `Access-Control-Allow-Origin` of a gateway response. One origin is a static value; with
 * several, the request's Origin is echoed, because a gateway response cannot choose among
 * them. That lets any origin read these answers, which are fixed catalogue texts with no data.
 */
const allowOrigin = (origins: readonly string[]): string =>
  origins.length === 1 && origins[0] !== undefined ? quoted(origins[0]) : 'method.request.header.Origin';

/** A static header value as API Gateway writes it: in single quotes, which it cannot escape. */
export const quoted = (value: string): string => {
  if (value.includes("'")) throw new Error(`A gateway header value cannot contain a single quote: ${value}`);
  return `'${value}'`;
};

export const gatewayResponseTemplate = (type: GatewayResponseType, corsOrigins: readonly string[] = []): GatewayResponseTemplate => {
  const answer = gatewayAnswer(type);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name] = quoted(String(value));
  if (corsOrigins.length > 0) {
    headers['Access-Control-Allow-Origin'] = allowOrigin(corsOrigins);
    headers['Access-Control-Expose-Headers'] = quoted(CORS_EXPOSED_HEADERS.join(', '));
    headers.Vary = "'Origin'";
  }
  return {
    ...(keepsStatus(type) ? {} : { statusCode: String(answer.statusCode) }),
    responseHeaders: headers,
    templates: { 'application/json': answer.body },
  };
};
