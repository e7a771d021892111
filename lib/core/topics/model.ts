import type { TopicConfig } from './configs.js';

/** A topic as the registry holds it. */
export interface Topic {
  name: string;
  topicId: string;
  partitions: number;
  replicationFactor: number;
  /** Explicit overrides only; effective values are these over the defaults. */
  configs: Partial<TopicConfig>;
  createdAt: number;
}

/** What a partition's state item says about replicas and bounds. */
export interface PartitionInfo {
  partition: number;
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  /** Replicas out of the ISR. */
  osr: string[];
  /** Each replica store's log end offset. */
  logEndOffsets: Record<string, number>;
  logStartOffset: number;
  highWatermark: number;
}

export interface StoreInfo {
  id: string;
  location: string;
  /** S3 Standard (regional) or S3 Express One Zone (a directory bucket in one availability zone). */
  kind: 'standard' | 'express';
  /** The availability zone id of an Express One Zone store. */
  zone?: string;
}

export const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
