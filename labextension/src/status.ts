/**
 * The status-bar item: which engine runs kernels (`GPU: NVIDIA H100 80GB HBM3` or
 * `emulator (no GPU)`) and, on a GPU, how much of its memory is in use.
 *
 * It asks the server extension (`GET /cudakit/engine`, cudakit/lab.py) rather than a
 * kernel: the server answers while a kernel is busy with a long cell, before any kernel
 * has started, and without a CUDA context of its own.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

export interface IEngine {
  engine: 'gpu' | 'emu';
  label: string;
  memory_used_bytes?: number | null;
  memory_total_bytes?: number | null;
}

const GIB = 2 ** 30;

/** The item's text, e.g. `GPU: NVIDIA H100 80GB HBM3 · 1.2 / 79.6 GiB`. */
export function describe(engine: IEngine): string {
  const used = engine.memory_used_bytes;
  const total = engine.memory_total_bytes;
  if (engine.engine !== 'gpu' || used == null || total == null) {
    return engine.label;
  }
  return `${engine.label} · ${(used / GIB).toFixed(1)} / ${(total / GIB).toFixed(1)} GiB`;
}

export class EngineStatus extends Widget {
  private timer = 0;

  constructor(private intervalMs = 5000) {
    super();
    this.addClass('jp-cudakit-engine');
    this.node.title = 'The engine cudakit kernels run on (and GPU memory in use)';
    void this.poll();
  }

  private async poll(): Promise<void> {
    const settings = ServerConnection.makeSettings();
    const url = URLExt.join(settings.baseUrl, 'cudakit', 'engine');
    try {
      const response = await ServerConnection.makeRequest(url, {}, settings);
      if (response.ok) {
        const engine = (await response.json()) as IEngine;
        this.node.textContent = describe(engine);
        this.node.dataset.engine = engine.engine;
        if (engine.engine !== 'gpu') {
          return; // the emulator's state does not change: no need to ask again
        }
      } else {
        this.node.textContent = '';
      }
    } catch {
      this.node.textContent = '';
    }
    if (!this.isDisposed) {
      this.timer = window.setTimeout(() => void this.poll(), this.intervalMs);
    }
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }
}
