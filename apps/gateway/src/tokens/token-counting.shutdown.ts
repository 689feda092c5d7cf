import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { tokenCountPool } from '@igw/tokenizer';

/** Stops the token counting workers with the gateway (idle, they would not keep the process alive either). */
@Injectable()
export class TokenCountingShutdown implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return tokenCountPool.close();
  }
}
