/**
 * `npx cdk synth -c stage=<stage>` as an operator runs it, offline and without AWS credentials,
 * with real esbuild bundling: a broken handler entry or a bundle that cannot load fails here.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { generateApiKey } from '../../shared/api-keys';
import { MISSING_CREDENTIALS_MESSAGE } from '../../shared/lambda-aliases/credential-provider';
import { EVENT_STREAMS_MISSING_MESSAGE } from '../../shared/lambda-aliases/event-streams';
import { apiEvent, context, tokenEvent } from '../support/events';
import { createTestTables } from '../support/tables';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { handledOperationIds } from '../support/operations';
import { pascalCase } from '../../infra/constructs/names';
import { regionalStackId } from '../../infra/stage-stacks';
import { stageSettings } from '../../infra/stages';
import { stackName } from '../../shared/stack';
import { multiRegionStages } from './synth';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const run = promisify(execFile);

/** The environment of a machine with no AWS account: no credentials, no config, no instance metadata. */
const offline = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('AWS_') && !name.startsWith('CDK_')) env[name] = value;
  return {
    ...env,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: '1',
  };
};

/**
 * How long a CDK CLI run, and a test of several child processes, may take. The synth bundles every
 * function with esbuild and runs cdk-nag, and the listing beside it synthesizes each region's stack:
 * some 30 s of CPU together, which took over 120 s on two cores beside four busy processes.
 */
const CDK_CLI_TIMEOUT_MS = 600_000;

const cdk = (args: string[]) =>
  run('npx', ['cdk', ...args], { cwd: projectRoot, env: offline(), timeout: CDK_CLI_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });

let outdir: string;
let synth: { stdout: string; stderr: string };

/** The stage in several regions whose stacks `cdk ls` lists, and the listing, run beside the synth. */
const [MULTI_REGION_STAGE = ''] = multiRegionStages();
let listing: Promise<{ stdout: string }>;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'pet-store-cdk-'));
  // Beside the synth, not after it; a failed listing is the listing test's failure, not an unhandled one.
  listing = cdk(['ls', '-c', `stage=${MULTI_REGION_STAGE}`]);
  listing.catch(() => undefined);
  synth = await cdk(['synth', '-c', 'stage=staging', '-o', outdir, '--quiet']);
}, CDK_CLI_TIMEOUT_MS);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

interface AssetManifest {
  files: Record<string, { displayName?: string; source: { path: string; packaging?: string } }>;
}

/** Every byte of a bundle is read and compiled on each cold start (issue 5's budget). */
/**
 * Staging's functions: each operation's, the authorizer, the key audit's writer and expiry sweep,
 * the idempotency sweep (a one-region stage is its own home), and the pre-traffic hook of its canary release.
 */
const STAGING_FUNCTION_COUNT = handledOperationIds.length + 1 + 2 + 1 + 1;

const MAX_BUNDLE_BYTES = 350 * 1024;
/**
 * Strings of the SDK's default credential chain links that Lambda never uses, one per link: the
 * web identity provider, credential_process, SSO, the container provider, and the STS client.
 */
const UNUSED_CREDENTIAL_PROVIDERS = [
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'credential_process',
  'sso_start_url',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AssumeRoleWithWebIdentity',
];
/** Header names of the event-stream codec, which DynamoDB never uses. */
const EVENT_STREAM_CODEC = [':message-type', ':event-type'];

/** The function bundles of the synthesized assembly, by asset name ("Functions/ListPets/Function/Code"). */
const functionBundles = () => {
  const manifest = JSON.parse(readFileSync(join(outdir, 'PetStore-staging.assets.json'), 'utf8')) as AssetManifest;
  return Object.values(manifest.files)
    .map((file) => ({ name: file.displayName ?? file.source.path, path: join(outdir, file.source.path) }))
    .filter(({ path }) => existsSync(join(path, 'index.mjs')));
};

/** The credentials Lambda puts in a function's environment (DynamoDB Local accepts any). */
const ROLE_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'ASIAROLEKEY', AWS_SECRET_ACCESS_KEY: 'role-secret', AWS_SESSION_TOKEN: 'role-token' };

/** Runs a bundle's handler once in a fresh Node process, as Lambda would, and returns its answer. */
const invokeBundle = async (fn: string, event: unknown, env: NodeJS.ProcessEnv): Promise<unknown> => {
  const bundle = functionBundles().find(({ name }) =>
    ['Functions', 'KeyAudit', 'IdempotencySweep'].some((construct) => name === `${construct}/${fn}/Function/Code`),
  );
  if (!bundle) throw new Error(`no bundle for ${fn}`);
  const script = `
    const { handler } = await import(${JSON.stringify(join(bundle.path, 'index.mjs'))});
    const context = { ...JSON.parse(process.env.CONTEXT), getRemainingTimeInMillis: () => 10000 };
    console.log('ANSWER ' + JSON.stringify(await handler(JSON.parse(process.env.EVENT), context)));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...offline(), ...env, EVENT: JSON.stringify(event), CONTEXT: JSON.stringify(context) },
  });
  const answer = stdout.split('\n').find((line) => line.startsWith('ANSWER '));
  return JSON.parse(answer?.slice('ANSWER '.length) ?? 'null');
};

describe('npx cdk synth -c stage=staging', { timeout: CDK_CLI_TIMEOUT_MS }, () => {
  it('writes the PetStore-staging template without AWS credentials', () => {
    const template = JSON.parse(readFileSync(join(outdir, 'PetStore-staging.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    const functions = Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(STAGING_FUNCTION_COUNT);
    expect(synth.stderr).not.toMatch(/Unable to resolve AWS account|credentials/i);
  });

  it('bundles each function as one minified ESM file and nothing beside it, and each bundle loads', async () => {
    const bundles = functionBundles().map(({ path }) => path);
    expect(bundles).toHaveLength(STAGING_FUNCTION_COUNT);
    for (const bundle of bundles) {
      const code = readFileSync(join(bundle, 'index.mjs'), 'utf8');
      // No source map: nothing reads one (no NODE_OPTIONS=--enable-source-maps), so none ships.
      expect(readdirSync(bundle)).toEqual(['index.mjs']);
      expect(code).not.toContain('sourceMappingURL');
      expect(code.length / code.split('\n').length).toBeGreaterThan(1000); // minified: long lines
      // A fresh Node process imports the bundle as Lambda would, and finds the handler.
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(join(bundle, 'index.mjs'))}); console.log(typeof m.handler);`,
        ],
        { env: { ...process.env, AWS_REGION: 'eu-west-1' } },
      );
      expect(stdout.trim()).toBe('function');
    }
  });

  it("keeps each bundle within 350 KB (the hook's aside), with the environment credentials in place of the default chain", () => {
    const bundles = functionBundles();
    expect(bundles.map(({ name }) => name).sort()).toEqual(
      [
        ...['authorizer', ...handledOperationIds].map((fn) => `Functions/${pascalCase(fn)}/Function/Code`),
        ...['ExpirySweep', 'Writer'].map((fn) => `KeyAudit/${fn}/Function/Code`),
        'IdempotencySweep/Sweep/Function/Code',
        'Release/PreTrafficHook/Function/Code',
      ].sort(),
    );
    for (const { name, path } of bundles) {
      const code = readFileSync(join(path, 'index.mjs'), 'utf8');
      // The pre-traffic hook serves no request (CodeDeploy runs it once a release): its two SDK
      // clients, and their real event-stream codecs, cost a release a cold start, no client.
      const hook = name === 'Release/PreTrafficHook/Function/Code';
      if (!hook) expect(Buffer.byteLength(code), name).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
      // Every bundle's SDK client (the audit writer's too: it flushes its region's authorizer cache)
      // takes Lambda's credentials from the environment, without the rest of the default chain.
      expect(code, name).toContain(MISSING_CREDENTIALS_MESSAGE);
      for (const marker of UNUSED_CREDENTIAL_PROVIDERS) expect(code.includes(marker), `${name}: ${marker}`).toBe(false);
      // The hook's Lambda client needs the real event-stream codecs (test/unit/pre-traffic-hook.test.ts).
      if (hook) continue;
      expect(code, name).toContain(EVENT_STREAMS_MISSING_MESSAGE);
      for (const marker of EVENT_STREAM_CODEC) expect(code.includes(marker), `${name}: ${marker}`).toBe(false);
    }
  });

  it('runs each bundle on DynamoDB Local, signing with the credentials of the environment', async () => {
    const tables = await createTestTables();
    const key = generateApiKey();
    const { keyId } = await apiKeysRepository({ client: tables.client, tables }).register(key, 'cdk-cli-test', {
      usage: localUsageKey(),
      changedBy: ACTOR,
    });
    const env = {
      ...ROLE_CREDENTIALS,
      AWS_REGION: 'eu-west-1',
      DYNAMODB_ENDPOINT: tables.endpoint,
      PETS_TABLE_NAME: tables.pets,
      API_KEYS_TABLE_NAME: tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
      IDEMPOTENCY_TABLE_NAME: tables.idempotency,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    };
    const [authorized, created] = await Promise.all([
      invokeBundle('Authorizer', tokenEvent(`Bearer ${key}`), env),
      invokeBundle(
        'CreatePet',
        apiEvent({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' }),
        env,
      ),
    ]);
    expect(authorized).toMatchObject({ principalId: keyId });
    expect(created).toMatchObject({ statusCode: 201 });
    const pet = JSON.parse((created as { body: string }).body) as { id: number };
    expect(pet).toMatchObject({ name: 'Rex', categoryId: 1, status: 'available' });
    const [listed, got] = await Promise.all([
      invokeBundle('ListPets', apiEvent(), env),
      invokeBundle(
        'GetPet',
        apiEvent({ resource: '/pets/{petId}', path: `/pets/${pet.id}`, pathParameters: { petId: String(pet.id) } }),
        env,
      ),
    ]);
    expect(listed).toMatchObject({ statusCode: 200, body: JSON.stringify([pet]) });
    expect(got).toMatchObject({ statusCode: 200, body: JSON.stringify(pet) });

    // The key audit trail's two: the sweep marks a key past its expiry, and deletes the usage key no
    // live key uses any more; the writer takes a stream batch.
    const expired = await apiKeysRepository({ client: tables.client, tables }).register(generateApiKey(), 'expired', {
      usage: localUsageKey(),
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
      changedBy: ACTOR,
    });
    const streamEvent = {
      Records: [
        {
          eventID: '1',
          eventName: 'INSERT',
          eventSource: 'aws:dynamodb',
          dynamodb: {
            ApproximateCreationDateTime: 1_893_553_445,
            NewImage: { keyId: { S: keyId }, name: { S: 'x' } },
            SequenceNumber: '1',
          },
        },
      ],
    };
    const [swept, written] = await Promise.all([invokeBundle('ExpirySweep', {}, env), invokeBundle('Writer', streamEvent, env)]);
    expect(swept).toEqual({ marked: [expired.keyId], usageKeysDeleted: [expired.usageKeyId] });
    expect(written).toEqual({ batchItemFailures: [] });

    // The idempotency sweep: the tables hold no expired record.
    expect(await invokeBundle('Sweep', {}, env)).toEqual({ deleted: 0, kept: 0, cutShort: false });
  });
});

describe('npx cdk ls -c stage=<a stage in several regions>', () => {
  it('lists one stack per region of the stage, in its regions, each named PetStore-<stage>, without AWS credentials', async () => {
    const stage = MULTI_REGION_STAGE;
    const { stdout } = await listing;
    const listed = stdout.split('\n').filter((line) => line.trim() !== '');
    expect(listed).toEqual((stageSettings(stage).regions ?? []).map((region) => `${regionalStackId(stage, region)} (${stackName(stage)})`));
  });
});

describe('npx cdk synth with a bad stage name', { timeout: CDK_CLI_TIMEOUT_MS }, () => {
  it('refuses it with advice in one line, no stack trace, and writes nothing', async () => {
    const failed = await cdk(['synth', '-c', 'stage=Not_A_Stage', '-o', join(outdir, 'bad'), '--quiet']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    // What the app wrote: without the CLI's own closing line and npm's warnings about this machine's configuration.
    const appLines = (failed?.stderr ?? '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('npm warn') && !line.endsWith('Subprocess exited with error 1'));
    expect(appLines).toEqual([
      "Invalid stage name 'Not_A_Stage': use 1–25 lower-case letters, digits or hyphens, starting with a letter (e.g. -c stage=staging).",
    ]);
    expect(failed?.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(outdir, 'bad', 'PetStore-Not_A_Stage.template.json'))).toBe(false);
  });
});
