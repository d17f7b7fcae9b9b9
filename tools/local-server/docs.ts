/**
 * The API's documentation, served by the local server only: the OpenAPI document at
 * `/v1/openapi.json`, and Swagger UI at `/v1/docs`, from the installed swagger-ui-dist package
 * (no CDN). Neither needs a key: the page asks for one with its Authorize button, and then
 * calls this server's API like any client.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BASE_PATH } from '../../shared/routes';
import { buildOpenApiDocument } from '../openapi/document';

export interface StaticAnswer {
  /** The page's path, for the access log line. */
  readonly path: string;
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string | Buffer;
}

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Pet store API</title>
    <link rel="stylesheet" href="${BASE_PATH}/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="${BASE_PATH}/docs/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${BASE_PATH}/docs/swagger-ui-bundle.js"></script>
    <script src="${BASE_PATH}/docs/init.js"></script>
  </body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '${BASE_PATH}/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayRequestDuration: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
});
`;

const headers = (contentType: string): Record<string, string> => ({
  'Content-Type': contentType,
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  // Swagger UI sets inline styles; nothing is loaded from anywhere but this server.
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
});

/** The answers, built once: the document lists this server first, so "Try it out" calls it. */
const buildAnswers = (): Map<string, StaticAnswer> => {
  const document = buildOpenApiDocument({ extraServers: [{ url: BASE_PATH, description: 'This local server' }] });
  const page = (path: string, contentType: string, body: string | Buffer): [string, StaticAnswer] => [
    path,
    { path, statusCode: 200, headers: headers(contentType), body },
  ];
  const asset = (file: string, contentType: string) => page(`${BASE_PATH}/docs/${file}`, contentType, readFileSync(join(swaggerUi, file)));
  return new Map([
    page(`${BASE_PATH}/openapi.json`, 'application/json', JSON.stringify(document, null, 2)),
    page(`${BASE_PATH}/docs`, 'text/html; charset=utf-8', PAGE),
    page(`${BASE_PATH}/docs/init.js`, 'text/javascript; charset=utf-8', INIT),
    asset('swagger-ui.css', 'text/css; charset=utf-8'),
    asset('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    asset('favicon-32x32.png', 'image/png'),
  ]);
};

// Built on first use and shared: every local server in a process serves the same bytes.
let answersOnce: Map<string, StaticAnswer> | undefined;

/** Serves GET requests for the documentation; everything else is the API's (undefined). */
export const createDocumentation = () => {
  const answers = (answersOnce ??= buildAnswers());
  return (method: string, target: string): StaticAnswer | undefined => {
    if (method !== 'GET') return undefined;
    return answers.get(target.split('?')[0] ?? '');
  };
};
