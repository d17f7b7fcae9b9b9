/** The expiry sweep's handler: a failure is one safe log line, and still a failed invocation. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandler, ExpirySweepFailed } from '../../functions/key-expiry';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import { logger } from '../../shared/logger';
import { context } from '../support/events';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A keys repository whose sweep fails as the SDK does, quoting the table and the role. */
const failingKeys = (error: Error) => ({ markExpired: () => Promise.reject(error) }) as unknown as ApiKeysRepository;

describe('the expiry sweep', () => {
  it('logs a failure as one line without the table, role or stack, then fails the invocation with nothing of the error', async () => {
    const error = Object.assign(
      new Error(
        'User: arn:aws:sts::123456789012:assumed-role/PetStore-prod-KeyExpiryRole/fn is not authorized to perform: ' +
          'dynamodb:Scan on resource: arn:aws:dynamodb:eu-west-1:123456789012:table/PetStore-prod-ApiKeysTable-1A2B',
      ),
      { name: 'AccessDeniedException' },
    );
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    const failure = await createHandler({ keys: failingKeys(error) })({}, context).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(failure).toBeInstanceOf(ExpirySweepFailed);
    const thrown = failure as Error;
    // What the Lambda runtime would log of it: name, message and stack.
    for (const text of [thrown.message, thrown.stack ?? '']) {
      expect(text).not.toContain('123456789012');
      expect(text).not.toContain('ApiKeysTable');
      expect(text).not.toMatch(/\n\s+at /);
    }
    expect(logged.mock.calls).toEqual([
      [
        'expiry sweep failed',
        {
          errorName: 'AccessDeniedException',
          errorMessage: 'User: <arn> is not authorized to perform: dynamodb:Scan on resource: <arn>',
        },
      ],
    ]);
  });

  it('answers the ids it marked when it succeeds', async () => {
    const keys = { markExpired: async () => [{ keyId: 'aaaaaaaaaaaa' }] } as unknown as ApiKeysRepository;
    expect(await createHandler({ keys })({}, context)).toEqual({ marked: ['aaaaaaaaaaaa'] });
  });
});
