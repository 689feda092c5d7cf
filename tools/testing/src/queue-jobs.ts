import { createBullBackend, type QueueBackendOptions } from '@igw/messaging';
import { eventually } from './eventually';

export interface FinishedJob {
  state: 'completed' | 'failed';
  returnvalue: unknown;
}

/**
 * Waits until each job has run to its end (completed, or failed with no attempt left) and
 * answers how each ended, in the order given. A check that a job changed nothing needs this
 * proof that its consumer is past it; a fixed wait passes on a slow machine without testing
 * anything. The jobs need ids, and must be kept once finished (BullMQ's default).
 */
export async function finishedJobs(backend: QueueBackendOptions, queueName: string, jobIds: readonly string[], timeoutMs = 30_000): Promise<FinishedJob[]> {
  const queue = createBullBackend(backend).createQueue(queueName);
  try {
    const states = () => Promise.all(jobIds.map((id) => queue.getJobState(id)));
    await eventually(async () => (await states()).every((state) => state === 'completed' || state === 'failed'), timeoutMs, 50);
    const ended = (await states()) as Array<FinishedJob['state']>;
    // Awaited here: the queue must not close under the look-ups.
    return await Promise.all(jobIds.map(async (id, index) => ({ state: ended[index], returnvalue: (await queue.getJob(id))?.returnvalue })));
  } finally {
    await queue.close();
  }
}
