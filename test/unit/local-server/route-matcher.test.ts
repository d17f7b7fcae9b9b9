/** matchRoute: the local server's routing, as API Gateway routes (404 for an unknown path or method). */
import { describe, expect, it } from 'vitest';
import { routes } from '../../../shared/routes';
import { matchRoute } from '../../../tools/local-server/route-matcher';
import { fixturePath } from '../../support/fixture-names';

const operationOf = (method: string, path: string) => matchRoute(method, path)?.route.operationId;

describe('matchRoute', () => {
  it.each(routes.map((route) => [route.method, route.path.replace(/\{[^}/]+\}/g, '42'), route.operationId] as const))(
    'routes %s %s to %s',
    (method, path, operationId) => {
      expect(operationOf(method, path)).toBe(operationId);
    },
  );

  it('hands over the path parameter as sent, and none for routes without one', () => {
    expect(matchRoute('GET', '/pets/42')?.pathParameters).toEqual({ petId: '42' });
    expect(matchRoute('GET', '/pets/abc')?.pathParameters).toEqual({ petId: 'abc' });
    expect(matchRoute('GET', '/pets')?.pathParameters).toEqual({});
  });

  it.each([
    ['/pets/%31%32', '12'],
    ['/pets/a%20b', 'a b'],
    ['/pets/%2F', '/'],
  ])('percent-decodes the petId in %s', (path, petId) => {
    expect(matchRoute('GET', path)?.pathParameters).toEqual({ petId });
  });

  it.each(['/pets/%', '/pets/%E0%A4%A', '/pets/%zz'])('leaves the bad percent-encoding %s as sent', (path) => {
    expect(matchRoute('GET', path)?.pathParameters).toEqual({ petId: path.slice('/pets/'.length) });
  });

  it.each([
    ['GET', '/'],
    ['GET', ''],
    ['GET', '/pet'],
    ['GET', '/Pets'],
    ['GET', '/v1/pets'],
    ['GET', `/pets/1${fixturePath('photos')}`],
    ['GET', fixturePath('orders')],
    ['GET', fixturePath('orders', '1')],
  ])('finds no route for %s %j', (method, path) => {
    expect(matchRoute(method, path)).toBeUndefined();
  });

  /** Each method HTTP clients send that no route has on that path (and a method in lower case, which API Gateway does not match). */
  const unroutedMethods = [...new Set(routes.map((route) => route.path))].flatMap((template) => {
    const routed = routes.filter((route) => route.path === template).map((route) => route.method as string);
    const path = template.replace(/\{[^}/]+\}/g, '1');
    return [
      ...['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].filter((method) => !routed.includes(method)).map((method) => [method, path]),
      [routed[0]!.toLowerCase(), path],
    ];
  });

  it.each(unroutedMethods)('finds no route for the method %s on %s', (method, path) => {
    expect(matchRoute(method, path)).toBeUndefined();
  });

  /** Each route's path, a parameter filled in, with a trailing slash, and with its last slash doubled. */
  const slashed = routes.flatMap((route) => {
    const path = route.path.replace(/\{[^}/]+\}/g, '1');
    const last = path.lastIndexOf('/');
    return [
      [route.method, `${path}/`],
      [route.method, `${path.slice(0, last)}/${path.slice(last)}`],
    ];
  });

  it.each(slashed)('finds no route for %s %s (no trailing or doubled slash)', (method, path) => {
    expect(matchRoute(method, path)).toBeUndefined();
  });
});
