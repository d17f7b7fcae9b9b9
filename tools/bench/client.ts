/**
 * The client library's per-call overhead: pets.list() and pets.create() of @pet-store/client
 * (key, timeout, retry loop, error and Link parsing, hooks) against a fetch that answers at once,
 * beside a bare fetch of the same request to the same stub. Samples alternate in blocks so that
 * noise from the shared machine falls on both.
 */
import { PetStore } from '../../client/src/index';
import { atMost, type Check, type PartResult } from './results';
import { median, quantile, round } from '../stats';

export interface ClientOptions {
  /** Measured calls per candidate. */
  readonly iterations: number;
}

const BASE_URL = 'https://api.example.test/v1';
const API_KEY = 'petstore_bench-client-key-0123456789abcdefghij';
/** A budget far above the figure: a regression (a sync wait, a per-call compile) would cross it. */
const BUDGET_MICROS = 50;

const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
const listBody = JSON.stringify([pet]);
const petBody = JSON.stringify(pet);

/** Answers at once, as a server with no latency: the rest is the caller's cost. */
const immediateFetch = (async (input: string | URL | Request, init?: RequestInit) =>
  new Response(init?.method === 'POST' ? petBody : listBody, {
    status: init?.method === 'POST' ? 201 : 200,
    headers: { 'content-type': 'application/json', link: `<${BASE_URL}/pets?cursor=abc>; rel="next"` },
  })) as typeof fetch;

interface Candidate {
  readonly name: string;
  readonly client: () => Promise<unknown>;
  readonly bare: () => Promise<unknown>;
}

const candidates = (): Candidate[] => {
  const store = new PetStore({ baseUrl: BASE_URL, apiKey: API_KEY, fetch: immediateFetch });
  const authorization = `Bearer ${API_KEY}`;
  return [
    {
      name: 'pets.list',
      client: () => store.pets.list(),
      bare: async () => {
        const response = await immediateFetch(`${BASE_URL}/pets`, { headers: { authorization, accept: 'application/json' } });
        return JSON.parse(await response.text());
      },
    },
    {
      name: 'pets.create',
      client: () => store.pets.create({ name: 'Rex', categoryId: 1 }),
      bare: async () => {
        const response = await immediateFetch(`${BASE_URL}/pets`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        });
        return JSON.parse(await response.text());
      },
    },
  ];
};

const sample = async (call: () => Promise<unknown>, count: number, into: number[]) => {
  for (let index = 0; index < count; index += 1) {
    const start = process.hrtime.bigint();
    await call();
    into.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
};

export const runClient = async ({ iterations }: ClientOptions): Promise<PartResult> => {
  const started = Date.now();
  const block = 250;
  const warmUp = Math.max(1_000, Math.floor(iterations / 2));
  const checks: Check[] = [];
  const rows: Array<Array<string | number>> = [];
  for (const candidate of candidates()) {
    await sample(candidate.client, warmUp, []);
    await sample(candidate.bare, warmUp, []);
    const client: number[] = [];
    const bare: number[] = [];
    for (let done = 0; done < iterations; done += block) {
      await sample(candidate.client, block, client);
      await sample(candidate.bare, block, bare);
    }
    const overhead = median(client) - median(bare);
    rows.push([
      candidate.name,
      round(median(client), 1),
      round(quantile(client, 0.99), 1),
      round(median(bare), 1),
      round(quantile(bare, 0.99), 1),
      round(overhead, 1),
      `<= ${BUDGET_MICROS}`,
    ]);
    checks.push(
      atMost(
        {
          id: `client.${candidate.name}.overhead`,
          label: `client ${candidate.name} overhead (median)`,
          value: round(overhead, 1),
          unit: 'µs',
          reference: { label: 'bare fetch median', value: round(median(bare), 1) },
          ratio: round(median(client) / median(bare)),
        },
        `overhead <= ${BUDGET_MICROS} µs`,
        (median(bare) + BUDGET_MICROS) / median(bare),
      ),
    );
  }
  return {
    part: 'client',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks,
    tables: [
      {
        title: `Client overhead: µs per call against a fetch that answers at once (${iterations} measured calls each after ${warmUp} warm-up calls)`,
        columns: ['call', 'client p50', 'client p99', 'bare p50', 'bare p99', 'overhead p50', 'budget µs'],
        rows,
      },
    ],
    notes: [
      'The client: @pet-store/client (client/src) with its defaults: a timeout per attempt, the retry loop (no retry happens), ' +
        'the Link header read, a new Idempotency-Key per create.',
      'The bare call: fetch of the same request to the same stub (a new Response each time), the body read and parsed; ' +
        'the bare create makes its UUID too. Both alternate in blocks of 250 calls.',
    ],
  };
};
