import { Module, type DynamicModule } from '@nestjs/common';
import { MessagingService } from './messaging.service';
import { MESSAGING_OPTIONS, type MessagingOptions } from './messaging.options';

@Module({})
export class MessagingModule {
  static forRoot(options: MessagingOptions): DynamicModule {
    return {
      module: MessagingModule,
      global: true,
      providers: [{ provide: MESSAGING_OPTIONS, useValue: options }, MessagingService],
      exports: [MessagingService],
    };
  }
}
