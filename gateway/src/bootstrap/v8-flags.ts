// Two V8 flags for the whole process, set as the first thing the gateway's entry module
// evaluates (it is its first import), before any other module allocates or compiles.
//
// Allocation-site pretenuring, off. A call in flight keeps its objects while it waits for its
// usage event's batch. Under many connections they outlive a scavenge or two, V8 then decides
// their allocation sites are long-lived and allocates those objects straight in old space
// ("tenure"), where only mark-compacts free them: from ~128 connections a cache hit's CPU doubled
// and stayed doubled, since the collections slow the loop and so keep calls waiting longer
// (bench/README.md, "Many connections"). Node refuses the flag in NODE_OPTIONS, so it is set
// here; V8 reads it at each garbage collection.
//
// WebAssembly compile tasks at once: one fewer than the cores (at least one), so the JavaScript
// thread keeps a core. V8 optimises the embedded store's hot WebAssembly functions (PGlite's
// PostgreSQL) on its own threads, by default on every thread of node's platform (four), and on
// two cores they took the gateway thread's core during the start. With this and the event loop
// held until listening (server.ts), a restart listened ~0.3 s sooner. The optimised code is the
// same, built by fewer threads at once; the embedded store's speed after the start did not move
// (bench/README.md, "A restart waiting on the WebAssembly compiler").
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

// test/v8-pretenuring.test.ts checks, by V8's own trace, that a running gateway has it off.
setFlagsFromString('--no-allocation-site-pretenuring');
setFlagsFromString(`--wasm-num-compilation-tasks=${Math.max(1, availableParallelism() - 1)}`);
