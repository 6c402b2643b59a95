// Progress on stderr while the CLI waits: a spinner with a label (`deploying 3/7 …`), drawn only
// when stderr is a terminal, so pipes and logs never see it.
import type { CliOutput } from './cli-io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;

export interface Progress {
  /** Shows (or changes) the label. */
  update(label: string): void;
  /** Erases the line, e.g. before printing a result; the next frame draws it again. */
  clear(): void;
  /** Erases the line and stops. */
  stop(): void;
}

/** A spinner on `stream` when it is a terminal; otherwise a progress that does nothing. */
export function createProgress(stream: CliOutput): Progress {
  if (!stream.isTTY) return { update() {}, clear() {}, stop() {} };
  let label = '';
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${label}`);
  };
  const clear = () => stream.write('\r\x1b[K');
  return {
    update(next) {
      label = next;
      if (timer === undefined) {
        timer = setInterval(draw, FRAME_MS);
        // A spinner never keeps the process alive.
        timer.unref?.();
      }
      draw();
    },
    clear,
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}
