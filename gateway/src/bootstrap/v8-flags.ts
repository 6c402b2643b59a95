// V8's allocation-site pretenuring, off for the whole process, set as the first thing the
// gateway's entry module evaluates (it is its first import), before any other module allocates.
//
// Why: a call in flight keeps its objects while it waits for its usage event's batch. Under many
// connections they outlive a scavenge or two, V8 then decides their allocation sites are
// long-lived and allocates those objects straight in old space ("tenure"), where only
// mark-compacts free them: from ~128 connections a cache hit's CPU doubled and stayed doubled,
// since the collections slow the loop and so keep calls waiting longer (bench/README.md, "Many
// connections"). Node refuses the flag in NODE_OPTIONS, so it is set here; V8 reads it at each
// garbage collection.
import { setFlagsFromString } from 'node:v8';

// test/v8-pretenuring.test.ts checks, by V8's own trace, that a running gateway has it off.
setFlagsFromString('--no-allocation-site-pretenuring');
