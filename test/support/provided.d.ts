// Values the emulators global setup hands to contract and integration tests via `inject`.
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    s3Endpoint: string;
  }
}
