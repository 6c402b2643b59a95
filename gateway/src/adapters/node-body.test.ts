import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { lazyAbortSignal } from './node-body.js';

/** The part of a ServerResponse lazyAbortSignal reads: its 'close' event and whether it was written whole. */
function response(): ServerResponse & { close(finished: boolean): void } {
  const res = new EventEmitter() as unknown as ServerResponse & { close(finished: boolean): void };
  res.close = (finished: boolean) => {
    Object.defineProperty(res, 'writableFinished', { value: finished });
    res.emit('close');
  };
  return res;
}

describe('lazyAbortSignal', () => {
  it('makes no signal until asked, and aborts it when the caller leaves before the answer', () => {
    const res = response();
    const signal = lazyAbortSignal(res);
    expect(res.listenerCount('close')).toBe(0);
    const asked = signal();
    expect(signal()).toBe(asked);
    res.close(false);
    expect(asked.aborted).toBe(true);
    // An aborted signal is never handed to a later request.
    const next = response();
    expect(lazyAbortSignal(next)()).not.toBe(asked);
    next.close(true);
  });

  it('hands an answered request’s signal to a later request, unaborted', () => {
    const first = response();
    const signal = lazyAbortSignal(first)();
    first.close(true);
    const second = response();
    const again = lazyAbortSignal(second)();
    expect(again).toBe(signal);
    expect(again.aborted).toBe(false);
    // The later request's hang-up aborts it as its own.
    second.close(false);
    expect(again.aborted).toBe(true);
  });

  it('keeps a signal that something still listens to out of reuse', () => {
    const first = response();
    const signal = lazyAbortSignal(first)();
    const onAbort = () => {};
    signal.addEventListener('abort', onAbort);
    first.close(true);
    const second = response();
    expect(lazyAbortSignal(second)()).not.toBe(signal);
    second.close(true);
    signal.removeEventListener('abort', onAbort);
  });
});
