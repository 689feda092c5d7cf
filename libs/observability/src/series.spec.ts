import { Registry, register } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series';

describe('series metrics', () => {
  afterEach(() => register.clear());

  it('render as prom-client renders a counter and a histogram of the same observations', async () => {
    const counter = new SeriesCounter('test_requests_total', 'Requests', ['route', 'status']);
    const histogram = new SeriesHistogram('test_duration_seconds', 'Duration', ['route'], [0.1, 1]);
    counter.inc(counter.series('/a', '200'));
    counter.inc(counter.series('/a', '200'), 2);
    counter.inc(counter.series('/b', '500'));
    for (const seconds of [0.05, 0.5, 0.5, 3]) histogram.observe(histogram.series('/a'), seconds);
    const ours = await register.metrics();

    const reference = new Registry();
    const { Counter, Histogram } = jest.requireActual<typeof import('prom-client')>('prom-client');
    const expectedCounter = new Counter({ name: 'test_requests_total', help: 'Requests', labelNames: ['route', 'status'], registers: [reference] });
    const expectedHistogram = new Histogram({ name: 'test_duration_seconds', help: 'Duration', labelNames: ['route'], buckets: [0.1, 1], registers: [reference] });
    expectedCounter.inc({ route: '/a', status: '200' }, 3);
    expectedCounter.inc({ route: '/b', status: '500' });
    for (const seconds of [0.05, 0.5, 0.5, 3]) expectedHistogram.observe({ route: '/a' }, seconds);
    expect(ours).toBe(await reference.metrics());
  });

  it('keeps one series per label values, found again without being created twice', () => {
    const counter = new SeriesCounter('test_found_total', 'Found', ['a', 'b', 'c']);
    expect(counter.series('x', 'y', 'z')).toBe(counter.series('x', 'y', 'z'));
    expect(counter.series('x', 'y', 'z')).not.toBe(counter.series('x', 'z', 'y'));
    expect(counter.series('x', 'y', 'z').labels).toEqual({ a: 'x', b: 'y', c: 'z' });
  });
});
