import type { CatalogueModel, CatalogueSnapshot } from '@igw/contracts';
import type { MessagingService } from '@igw/messaging';
import { CatalogueSnapshotService } from './catalogue-snapshot.service';

/** Messaging played in memory: snapshot requests wait until the test answers them. */
class ScriptedMessaging {
  readonly pending: Array<(snapshot: CatalogueSnapshot) => void> = [];
  announce?: (data: { revision: number }) => void;

  async subscribe(_topic: string, listener: (data: { revision: number }) => void): Promise<void> {
    this.announce = listener;
  }

  onRelayRecovered(): void {}

  request(): Promise<CatalogueSnapshot> {
    return new Promise((resolve) => this.pending.push(resolve));
  }

  answer(revision: number, models: CatalogueModel[] = []): void {
    const next = this.pending.shift();
    if (!next) throw new Error('no snapshot request is waiting');
    next({ revision, models });
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CatalogueSnapshotService', () => {
  let messaging: ScriptedMessaging;
  let service: CatalogueSnapshotService;

  beforeEach(async () => {
    messaging = new ScriptedMessaging();
    service = new CatalogueSnapshotService(messaging as unknown as MessagingService);
    const booted = service.onApplicationBootstrap();
    await settle();
    messaging.answer(1);
    await booted;
  });

  afterEach(() => service.onApplicationShutdown());

  it('fetches again at once when a revision is announced while a fetch is under way', async () => {
    void service.refresh();
    await settle();
    messaging.announce!({ revision: 2 });
    messaging.answer(1); // answered before revision 2 was committed
    await settle();
    expect(messaging.pending).toHaveLength(1);
    messaging.answer(2);
    await settle();
    expect(service.etag).toBe('W/"catalogue-2"');
  });

  it('fetches once per announced revision when idle, and ignores revisions it already has', async () => {
    messaging.announce!({ revision: 1 });
    await settle();
    expect(messaging.pending).toHaveLength(0);
    messaging.announce!({ revision: 3 });
    await settle();
    expect(messaging.pending).toHaveLength(1);
    messaging.answer(3);
    await settle();
    expect(service.etag).toBe('W/"catalogue-3"');
    expect(messaging.pending).toHaveLength(0);
  });
});
