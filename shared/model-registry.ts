/** The zod model a route names (shared/routes.ts names them, so that the route table itself needs no zod). */
import type * as z from 'zod/mini';
import * as models from './models';
import type { ModelName } from './routes';

export const modelOf = <Name extends ModelName>(name: Name): (typeof models)[Name] & z.ZodMiniType => models[name];
