import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import { StoredResponsesService } from './stored-responses.service';

/** Stored responses' queue: saves, conversations, reads and deletes asked by the gateways. */
@Injectable()
export class StoredResponsesWorkers implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly stored: StoredResponsesService,
  ) {}

  onApplicationBootstrap(): void {
    this.messaging.consume(
      QueueName.ResponsesRpc,
      {
        'responses.save': (job) => this.stored.save(job),
        'responses.conversation': (query) => this.stored.conversation(query),
        'responses.get': (query) => this.stored.get(query),
        'responses.delete': (query) => this.stored.delete(query),
        'responses.inputItems': (query) => this.stored.inputItems(query),
      },
      16,
    );
  }
}
