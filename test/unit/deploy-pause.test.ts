/**
 * The deploy pause (functions/deploy-pause.ts): CloudFormation's custom resource that answers only
 * after its wait, so that the stack's next custom domain is made the wait later. Its answer is the
 * custom resource response, PUT to the request's URL, as CloudFormation reads it.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/deploy-pause';
import { MAX_PAUSE_SECONDS, PAUSE_SECONDS_PROPERTY } from '../../shared/deploy-pause';

interface Received {
  readonly method?: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** A stand-in for CloudFormation's presigned URL: it records each PUT. */
const received: Received[] = [];
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    received.push({ method: request.method, headers: request.headers, body: JSON.parse(body) as Record<string, unknown> });
    response.writeHead(request.url === '/refused' ? 403 : 200).end();
  });
});
let baseUrl = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const event = (
  requestType: CloudFormationCustomResourceEvent['RequestType'],
  seconds: unknown,
  path = '/response',
): CloudFormationCustomResourceEvent =>
  ({
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:fixture-deployPause',
    ResponseURL: `${baseUrl}${path}`,
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/PetStore-fixture/1',
    RequestId: `request-${received.length}`,
    LogicalResourceId: 'DomainOrderBeforeDomain1',
    ResourceType: 'Custom::DeployPause',
    ResourceProperties: { ServiceToken: 'token', [PAUSE_SECONDS_PROPERTY]: seconds },
    ...(requestType === 'Create' ? {} : { PhysicalResourceId: 'DomainOrderBeforeDomain1', OldResourceProperties: {} }),
  }) as CloudFormationCustomResourceEvent;

/** A handler whose waits are recorded, and each answer is sent only once its wait is over. */
const recordingHandler = () => {
  const waits: number[] = [];
  const log: string[] = [];
  const handler = createHandler({
    wait: async (milliseconds) => {
      waits.push(milliseconds);
      log.push('waited');
    },
    respond: async (url, body) => {
      log.push('answered');
      const answer = await fetch(url, { method: 'PUT', body, headers: { 'content-type': '' } });
      if (!answer.ok) throw new Error(`answered ${answer.status}`);
    },
  });
  return { handler, waits, log };
};

describe('the deploy pause', () => {
  it.each(['Create', 'Update', 'Delete'] as const)(
    'on %s, waits its seconds, then answers SUCCESS under the same resource id',
    async (type) => {
      const { handler, waits, log } = recordingHandler();
      const before = received.length;
      await handler(event(type, '35'));
      expect(waits).toEqual([35_000]);
      expect(log).toEqual(['waited', 'answered']);
      const [answer] = received.slice(before);
      expect(answer?.method).toBe('PUT');
      expect(answer?.body).toMatchObject({
        Status: 'SUCCESS',
        PhysicalResourceId: 'DomainOrderBeforeDomain1',
        StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/PetStore-fixture/1',
        LogicalResourceId: 'DomainOrderBeforeDomain1',
        RequestId: `request-${before}`,
      });
    },
  );

  it('sends its answer by the default HTTPS PUT, with no content type, as the presigned URL takes it', async () => {
    const before = received.length;
    await createHandler({ wait: async () => undefined })(event('Create', '0'));
    const [answer] = received.slice(before);
    expect(answer?.method).toBe('PUT');
    expect(answer?.headers['content-type'] ?? '').toBe('');
    expect(answer?.body).toMatchObject({ Status: 'SUCCESS' });
  });

  it.each(['-1', '1.5', 'soon', String(MAX_PAUSE_SECONDS + 1)])(
    'refuses a create or update asking for %s seconds, saying what it takes, without waiting',
    async (seconds) => {
      for (const type of ['Create', 'Update'] as const) {
        const { handler, waits } = recordingHandler();
        const before = received.length;
        await handler(event(type, seconds));
        expect(waits).toEqual([]);
        expect(received.slice(before)[0]?.body).toMatchObject({
          Status: 'FAILED',
          Reason: `${PAUSE_SECONDS_PROPERTY} must be a whole number of seconds from 0 to ${MAX_PAUSE_SECONDS}`,
        });
      }
    },
  );

  it('never refuses a delete, whatever it names, so that the stack can always be deleted', async () => {
    const { handler, waits } = recordingHandler();
    const before = received.length;
    await handler(event('Delete', 'soon'));
    expect(waits).toEqual([]);
    expect(received.slice(before)[0]?.body).toMatchObject({ Status: 'SUCCESS' });
  });

  it('fails the invocation when CloudFormation refuses the answer, so that Lambda sends the request again', async () => {
    await expect(createHandler({ wait: async () => undefined })(event('Create', '0', '/refused'))).rejects.toThrow(/answered 403/);
  });
});
