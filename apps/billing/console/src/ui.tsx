import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); a late answer for older deps is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, loading: false }),
      (error: unknown) => run === latest.current && setState({ error: messageOf(error), loading: false }),
    );
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Polled<T> {
  data: T | undefined;
  /** The last refresh's failure; the data of the one before stays shown. */
  error: string | undefined;
  /** When `data` was received. */
  receivedAt: Date | undefined;
}

/**
 * Runs `load` now and again `everyMs` after each answer while the page is visible: a hidden tab
 * asks nothing, and loads at once when shown again. One load at a time, however slow.
 */
export function usePolled<T>(load: () => Promise<T>, everyMs: number): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: undefined, error: undefined, receivedAt: undefined });
  useEffect(() => {
    let stopped = false;
    let running = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const visible = () => document.visibilityState === 'visible';
    const run = async () => {
      timer = undefined;
      if (stopped || !visible()) return;
      running = true;
      try {
        const data = await load();
        if (!stopped) setState({ data, error: undefined, receivedAt: new Date() });
      } catch (error) {
        if (!stopped) setState((previous) => ({ ...previous, error: messageOf(error) }));
      } finally {
        running = false;
      }
      if (!stopped && visible()) timer = setTimeout(run, everyMs);
    };
    const onVisibility = () => {
      if (!visible()) {
        clearTimeout(timer);
        timer = undefined;
      } else if (!running && timer === undefined) void run();
    };
    document.addEventListener('visibilitychange', onVisibility);
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [everyMs]);
  return state;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });
export const formatNumber = (value: number | string): string => number.format(typeof value === 'string' ? Number(value) : value);

/** USD amounts are exact decimal strings: shown with at least cents, never rounded away. */
export function formatUsd(value: string): string {
  const [whole, fraction = ''] = value.replace(/^-/, '').split('.');
  const sign = value.startsWith('-') ? '-' : '';
  const cents = fraction.padEnd(2, '0');
  return `${sign}$${Number(whole).toLocaleString('en-US')}.${cents}`;
}

export const formatTime = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/:00Z$/, 'Z');

export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** Copies to the clipboard, with a fallback for pages the Clipboard API refuses (plain http on another host than localhost). */
export async function copyText(text: string, fallbackInput?: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!fallbackInput) return false;
    fallbackInput.select();
    return document.execCommand('copy');
  }
}
