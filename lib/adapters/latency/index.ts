/** AWS latency models and the store decorators that apply them (local stack and benchmarks only). */
export * from './model.js';
export * from './stores.js';
