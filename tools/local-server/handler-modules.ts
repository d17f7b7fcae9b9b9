/**
 * The operations' handler modules, loaded from the route table: each route names its module
 * (`route.handler`, the entry the stack bundles), and every such module exports
 * `createHandler(dependencies)`. The local server and the tests build the handlers here, so a new
 * operation is served and tested once its route names its module. Only tools and tests import
 * this: each function's bundle holds its own module alone.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DatabaseHealth } from '../../shared/database-health';
import type { Clock } from '../../shared/http/http-api';
import { projectRoot } from '../../shared/project-root';
import type { Repositories } from '../../shared/repositories';
import { routes, type HandledOperationId, type Route } from '../../shared/routes';
import type { ProxyHandler } from './gateway';

/**
 * What an operation's handler is built with: every repository (shared/repositories.ts
 * `repositoriesFor`, so a new one reaches every handler with no change here), the clock of a
 * deprecated one, the health route's tables.
 */
export interface HandlerDependencies extends Repositories {
  readonly now?: Clock;
  /** What the health route reads; by default the tables the environment names. */
  readonly health?: DatabaseHealth;
}

/** A handler module's `createHandler`. */
export type HandlerFactory = (dependencies: HandlerDependencies) => ProxyHandler;

/** Each operation with a handler, and its module's factory, in the route table's order. */
export const loadHandlerFactories = async (): Promise<Readonly<Record<HandledOperationId, HandlerFactory>>> => {
  const factories: Array<readonly [string, HandlerFactory]> = [];
  for (const route of routes as readonly Route[]) {
    if (route.handler === undefined) continue;
    const module = (await import(pathToFileURL(resolve(projectRoot, route.handler)).href)) as { createHandler?: unknown };
    if (typeof module.createHandler !== 'function') throw new Error(`${route.handler} exports no createHandler.`);
    factories.push([route.operationId, module.createHandler as HandlerFactory]);
  }
  return Object.fromEntries(factories) as Record<HandledOperationId, HandlerFactory>;
};
