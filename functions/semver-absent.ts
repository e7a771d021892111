/**
 * Stands in for `semver` in every function bundle (infra/bundling.ts BUNDLE_ALIASES). Its one
 * importer there is aws-xray-sdk-core's patcher for the AWS SDK v2 (patchers/aws_p.js), which
 * requires it when Powertools' Tracer loads and calls it only to check a v2 SDK's version when a v2
 * client is captured. Sluice captures only v3 clients (functions/telemetry.ts), so the 29 KiB of
 * semver are never run; if that changes, this fails loudly instead of comparing versions wrongly.
 */
const absent = (): never => {
  throw new Error('semver is not bundled (functions/semver-absent.ts): capture AWS SDK v3 clients only');
};

export const gte = absent;
export default { gte: absent };
