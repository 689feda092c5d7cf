import { Redis } from 'ioredis';
import { requestPathRedisOptions } from '@igw/config';
import { InMemoryDeploymentStore, RedisDeploymentStore } from '@igw/providers';
import { dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { deploymentStoreContract } from '../support/deployment-store-contract';

const redisUrl = process.env.REDIS_URL;

// One set of rules, two stores: the process's (standalone) and Redis's, shared by every replica.
deploymentStoreContract('InMemoryDeploymentStore', () => new InMemoryDeploymentStore());

if (redisUrl) {
  const prefix = uniqueQueuePrefix();
  afterAll(() => dropQueueData({ url: redisUrl, prefix }));
  deploymentStoreContract('RedisDeploymentStore', async () => {
    const store = new RedisDeploymentStore(new Redis(redisUrl, requestPathRedisOptions()), prefix);
    await store.whenReady(5_000);
    return store;
  });
} else {
  it.skip('deployment store on redis (REDIS_URL is not set)', () => undefined);
}
