/**
 * Stands in for @smithy/core/event-streams in the deployed bundles (infra/bundling.ts). The S3 client
 * wires an event-stream marshaller into its config for the operations that stream events
 * (SelectObjectContent); Sluice calls none of them, on any client, so the 13 KiB codec would never
 * run. A client still builds (its config gets a marshaller); an event-stream operation would fail
 * with this module's error instead of running. test/infra/bundle.test.ts loads every bundle.
 */
const absent = (): never => {
  throw new Error(
    'AWS event streams are not bundled (functions/event-streams-absent.ts): Sluice calls no event-stream operation',
  );
};

/** The marshaller the clients' config holds; used only by an event-stream operation. */
export const eventStreamSerdeProvider = () => ({ serialize: absent, deserialize: absent });

/** As @smithy/core's: the config gets the provider's marshaller. */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (config: T) => unknown }>(
  input: T,
) => Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });

/** Made by a protocol only to (de)serialize an event stream. */
export class EventStreamSerde {
  constructor() {
    absent();
  }
}
