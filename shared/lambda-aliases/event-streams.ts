/**
 * What the deployed bundles have in place of `@smithy/core/event-streams` (infra/bundling.ts
 * aliases it here). The SDK loads event-stream support with a dynamic import, only for operations
 * that stream events; DynamoDB has none, but esbuild inlines every dynamic import it can resolve:
 * about 19 KB of codecs in every bundle, parsed on every cold start and never run.
 */
export const EVENT_STREAMS_MISSING_MESSAGE =
  'Event streams are not in this bundle: DynamoDB has no event-stream operations (shared/lambda-aliases/event-streams.ts).';

const missing = (): never => {
  throw new Error(EVENT_STREAMS_MISSING_MESSAGE);
};

/** The two names the SDK's HttpProtocol loads; either one fails at once, with the reason. */
export const eventStreamSerdeProvider = missing;
export class EventStreamSerde {
  constructor() {
    missing();
  }
}
