/**
 * Stands in for the SDK's pure-JavaScript SHA-256, SHA-1 and MD5 (infra/bundling.ts). Each of the
 * SDK's Node hash classes (Sha256Node, Sha1Node, Md5Node) uses node:crypto when `createHash` knows the
 * algorithm and falls back to its JavaScript twin only when it does not (a FIPS-only OpenSSL without
 * MD5). Lambda's Node.js runtime has all three, so the ~7.5 KiB of fallbacks never run in a deployed
 * function; if a runtime ever lacked one, the hash would fail with this module's error instead of
 * computing slowly. test/infra/bundle.test.ts loads every bundle, which makes the choice at import.
 */
const absent = (algorithm: string): never => {
  throw new Error(
    `node:crypto has no ${algorithm} here, and its JavaScript fallback is not bundled (functions/hash-fallbacks-absent.ts)`,
  );
};

export class Sha256Js {
  constructor() {
    absent('sha256');
  }
}

export class Sha1Js {
  constructor() {
    absent('sha1');
  }
}

export class Md5Js {
  constructor() {
    absent('md5');
  }
}
