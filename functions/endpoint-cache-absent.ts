/**
 * Stands in for @aws-sdk/endpoint-cache in the deployed bundles (infra/bundling.ts). The DynamoDB
 * client builds an endpoint cache into its config for endpoint discovery (DescribeEndpoints), but no
 * DynamoDB command of the pinned SDK adds the discovery middleware that would read it, and no other
 * client builds one; so the cache and the LRU library under it (mnemonist, ~8 KiB) never run. A client
 * still builds (its config gets this object); a use would fail with this module's error instead.
 * test/infra/bundle.test.ts loads every bundle, and test/infra/bundling.test.ts checks that the
 * pinned SDK still reads the cache nowhere.
 */
const absent = (): never => {
  throw new Error(
    'the SDK endpoint cache is not bundled (functions/endpoint-cache-absent.ts): Sluice uses no endpoint discovery',
  );
};

export class EndpointCache {
  constructor(readonly capacity: number) {}
  getEndpoint(): never {
    return absent();
  }
  get(): never {
    return absent();
  }
  set(): never {
    return absent();
  }
  delete(): never {
    return absent();
  }
  has(): never {
    return absent();
  }
  clear(): never {
    return absent();
  }
}
