import type { Metric } from 'prom-client';
import { register } from 'prom-client';

type Labels = Record<string, string>;

/** What the registry reads of a metric when it is scraped. */
interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>;
}
type Level = Map<string, unknown>;

/**
 * Metrics for the request path. prom-client builds a label hash string and checks every label
 * name on each increment; these find a series through one map per label (nothing allocated
 * once the series exists), keep plain numbers, and turn them into Prometheus' text only when
 * scraped. Label values are given in `labelNames`' order (up to six).
 */
abstract class SeriesMetric<S extends { labels: Labels }> {
  private readonly root: Level = new Map();
  protected readonly all: S[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (labelNames.length === 0 || labelNames.length > 6) throw new Error(`${name}: 1 to 6 labels`);
    register.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values, created on first use. */
  series(a: string, b = '', c = '', d = '', e = '', f = ''): S {
    const depth = this.labelNames.length;
    let level = this.root;
    for (let index = 0; index < depth - 1; index++) {
      const value = index === 0 ? a : index === 1 ? b : index === 2 ? c : index === 3 ? d : e;
      let next = level.get(value) as Level | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : depth === 4 ? d : depth === 5 ? e : f;
    let series = level.get(last) as S | undefined;
    if (!series) {
      const values = [a, b, c, d, e, f];
      series = this.create(Object.fromEntries(this.labelNames.map((label, index) => [label, values[index]])));
      level.set(last, series);
      this.all.push(series);
    }
    return series;
  }

  /** Forgets every series (the registry's `resetMetrics`). */
  reset(): void {
    this.root.clear();
    this.all.length = 0;
  }

  protected abstract create(labels: Labels): S;
}

export interface CounterSeries {
  labels: Labels;
  value: number;
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  readonly type = 'counter';

  inc(series: CounterSeries, amount = 1): void {
    series.value += amount;
  }

  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }

  get(): ScrapedMetric {
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values: this.all.map(({ labels, value }) => ({ labels, value })) };
  }
}

export interface ScaledCounterSeries {
  labels: Labels;
  /** The running total in integer units of 10^-scale. */
  units: bigint;
}

/**
 * A counter of exact decimal amounts (credits, to the micro-credit): summed as integers, so a
 * scrape shows `913.5` where a float sum would show `913.5000000000015`.
 */
export class SeriesScaledCounter extends SeriesMetric<ScaledCounterSeries> {
  readonly type = 'counter';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly scale: number,
  ) {
    super(name, help, labelNames);
  }

  inc(series: ScaledCounterSeries, units: bigint): void {
    series.units += units;
  }

  /** The series' total as the scrape shows it: the number nearest the exact decimal. */
  total(series: ScaledCounterSeries): number {
    const negative = series.units < 0n;
    const digits = (negative ? -series.units : series.units).toString().padStart(this.scale + 1, '0');
    return Number(`${negative ? '-' : ''}${digits.slice(0, digits.length - this.scale)}.${digits.slice(digits.length - this.scale)}`);
  }

  protected create(labels: Labels): ScaledCounterSeries {
    return { labels, units: 0n };
  }

  get(): ScrapedMetric {
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values: this.all.map((series) => ({ labels: series.labels, value: this.total(series) })) };
  }
}

export interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket (not cumulative: summed when scraped). */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  observe(series: HistogramSeries, value: number): void {
    const { buckets } = this;
    let index = 0;
    while (index < buckets.length && value > buckets[index]) index++;
    if (index < buckets.length) series.counts[index]++;
    series.sum += value;
    series.count++;
  }

  protected create(labels: Labels): HistogramSeries {
    return { labels, counts: new Float64Array(this.buckets.length), sum: 0, count: 0 };
  }

  get(): ScrapedMetric {
    const values: ScrapedMetric['values'] = [];
    for (const { labels, counts, sum, count } of this.all) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts[index];
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}
