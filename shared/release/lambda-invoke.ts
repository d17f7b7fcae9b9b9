/** How the pre-traffic hook invokes the version it checks: Lambda's Invoke, synchronous. */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { parsedJson, type Invoke } from '../release-checks';

/** Lambda's report of a function error: its payload names the error's type and message. */
const ErrorPayload = z.object({ errorType: z.optional(z.string()), errorMessage: z.optional(z.string()) });

/**
 * Invokes a version with Lambda's Invoke (synchronous), aborted by `signal`, and returns how it
 * ended: its payload parsed (undefined when it is not JSON), or its function error. One retry at
 * most: the check's deadline, not the client's backoff, bounds the wait.
 */
export const lambdaInvoke =
  (client: Pick<LambdaClient, 'send'>): Invoke =>
  async (version, event, signal) => {
    const output = await client.send(
      new InvokeCommand({ FunctionName: version, Payload: new TextEncoder().encode(JSON.stringify(event)) }),
      { abortSignal: signal },
    );
    const payload = parsedJson(output.Payload === undefined ? '' : new TextDecoder().decode(output.Payload));
    if (output.FunctionError !== undefined) {
      const error = ErrorPayload.safeParse(payload);
      const { errorType = output.FunctionError, errorMessage = '' } = error.success ? error.data : {};
      return { functionError: { errorType, errorMessage } };
    }
    return { answer: payload };
  };
