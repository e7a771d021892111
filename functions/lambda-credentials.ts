/**
 * The credential provider of a deployed function's AWS SDK clients, in place of the SDK's default
 * chain (@aws-sdk/credential-provider-node). Lambda hands a function its execution role's credentials
 * in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the chain's first
 * link; the rest of it (INI files, SSO, web identity, ECS, IMDS, and the STS and SSO clients they
 * carry, ~100 KiB of each bundle) is never reached in Lambda. The bundler aliases the default chain
 * to this module (infra/bundling.ts); the local stack and tests run the SDK's own chain.
 */
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** The SDK clients call `defaultProvider(init)` for their credentials (the chain's signature). */
export const defaultProvider =
  (): AwsCredentialIdentityProvider => async (): Promise<AwsCredentialIdentity> => {
    const accessKeyId = process.env['AWS_ACCESS_KEY_ID'];
    const secretAccessKey = process.env['AWS_SECRET_ACCESS_KEY'];
    if (!accessKeyId || !secretAccessKey) {
      throw new Error(
        'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set: Lambda sets them for the role',
      );
    }
    const sessionToken = process.env['AWS_SESSION_TOKEN'];
    const expiration = process.env['AWS_CREDENTIAL_EXPIRATION'];
    return {
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      ...(expiration ? { expiration: new Date(expiration) } : {}),
    };
  };
