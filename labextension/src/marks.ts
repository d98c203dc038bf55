/**
 * Errors at their lines: cudakit's kernel side puts a diagnostics bundle
 * (MIME type `application/vnd.cudakit.diagnostics+json`) next to the text of a
 * compile error or of a memcheck/racecheck/barrier/timeout error. This module turns
 * those bundles into CodeMirror lint marks (gutter marker, underline, message on
 * hover) on the `%%cuda` cell they point at.
 *
 * The marks are recomputed from the outputs of the notebook, so they appear when a
 * notebook with stored errors is opened and vanish when an output is cleared. A
 * bundle is dismissed (its marks removed) once its target cell is edited or run again.
 */
import { Cell, CodeCell, ICellModel } from '@jupyterlab/cells';
import { CodeMirrorEditor } from '@jupyterlab/codemirror';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IOutputModel } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { Compartment, StateEffect, Text } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { Widget } from '@lumino/widgets';

import { isCudaSource } from './cuda';

export const DIAGNOSTICS_MIME = 'application/vnd.cudakit.diagnostics+json';

// The lint gutter is added to an editor with its first mark and emptied with its last.
const GUTTER = lintGutter();
const gutterSlot = new Compartment();

/** One problem as the kernel sends it; `line` counts the `%%cuda` line as line 1. */
interface IProblem {
  line: number;
  column?: number | null;
  severity?: string;
  message: string;
  source?: string;
}

interface IBundle {
  error: string;
  kernel?: string | null;
  diagnostics: IProblem[];
}

function bundleOf(output: IOutputModel): IBundle | null {
  const data = output.data[DIAGNOSTICS_MIME] as unknown as IBundle | undefined;
  return data && Array.isArray(data.diagnostics) ? data : null;
}

/** The lint diagnostic for one problem, or null when its line is not in the text. */
export function toDiagnostic(doc: Text, problem: IProblem): Diagnostic | null {
  if (!(problem.line >= 1 && problem.line <= doc.lines)) {
    return null;
  }
  const line = doc.line(problem.line);
  let from = line.from + (line.text.length - line.text.trimStart().length);
  let to = line.to;
  if (problem.column && problem.column >= 1 && problem.column <= line.length + 1) {
    from = line.from + problem.column - 1;
    const word = /^\w+/.exec(line.text.slice(problem.column - 1));
    to = Math.min(line.to, from + (word ? word[0].length : 1));
  }
  if (to <= from) {
    to = Math.min(doc.length, from + 1);
  }
  const severity = problem.severity === 'warning' ? 'warning' : 'error';
  return { from, to, severity, message: problem.message, source: problem.source };
}

/** Keeps the lint marks of one notebook's CUDA cells in step with its outputs. */
export class NotebookMarks {
  private dismissed = new WeakSet<IOutputModel>();
  private targets = new Map<ICellModel, IOutputModel[]>();
  private marked = new Set<Cell>();
  private gutters = new WeakSet<EditorView>();
  private watched = new WeakSet<ICellModel>();
  private pending = false;

  constructor(private panel: NotebookPanel) {
    const notebook = panel.content;
    notebook.model?.cells.changed.connect(() => this.watchCells(), this);
    this.watchCells();
  }

  /** Forget the marks that point at `cell` (it was run again). */
  dismissFor(cell: ICellModel): void {
    for (const output of this.targets.get(cell) ?? []) {
      this.dismissed.add(output);
    }
    this.schedule();
  }

  private watchCells(): void {
    const cells = this.panel.content.model?.cells;
    if (!cells) {
      return;
    }
    for (let i = 0; i < cells.length; i++) {
      const model = cells.get(i);
      if (model.type !== 'code' || this.watched.has(model)) {
        continue;
      }
      this.watched.add(model);
      // an edit of the source (not of outputs or the execution count) dismisses its marks
      model.sharedModel.changed.connect((_, change) => {
        if (change.sourceChange) {
          this.dismissFor(model);
        }
      }, this);
      (model as CodeCell['model']).outputs.changed.connect(() => this.schedule(), this);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.pending) {
      return;
    }
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      void this.refresh();
    });
  }

  /** The cell a bundle points at: a kernel's `%%cuda` cell, or the cell itself. */
  private target(index: number, output: IOutputModel, bundle: IBundle): Cell | null {
    const widgets = this.panel.content.widgets;
    const meta = (output.metadata[DIAGNOSTICS_MIME] ?? {}) as { cell_id?: string };
    if (meta.cell_id) {
      const found = widgets.find(w => w.model.id === meta.cell_id);
      if (found) {
        return found;
      }
    }
    if (!bundle.kernel) {
      return widgets[index];
    }
    // A launch error in a notebook run without cell ids: the nearest %%cuda cell
    // above that defines the kernel.
    const name = bundle.kernel.split('<')[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const defines = new RegExp(`\\b${name}\\s*\\(`);
    for (let i = index; i >= 0; i--) {
      const source = widgets[i].model.sharedModel.getSource();
      if (isCudaSource(source) && defines.test(source)) {
        return widgets[i];
      }
    }
    return null;
  }

  private async refresh(): Promise<void> {
    const wanted = new Map<Cell, IProblem[]>();
    this.targets.clear();
    this.panel.content.widgets.forEach((cell, index) => {
      if (cell.model.type !== 'code') {
        return;
      }
      const outputs = (cell as CodeCell).model.outputs;
      for (let i = 0; i < outputs.length; i++) {
        const output = outputs.get(i);
        const bundle = bundleOf(output);
        if (!bundle || this.dismissed.has(output)) {
          continue;
        }
        const target = this.target(index, output, bundle);
        if (!target) {
          continue;
        }
        wanted.set(target, [...(wanted.get(target) ?? []), ...bundle.diagnostics]);
        this.targets.set(target.model, [...(this.targets.get(target.model) ?? []), output]);
      }
    });
    const stale = [...this.marked].filter(cell => !wanted.has(cell));
    await Promise.all([
      ...[...wanted].map(([cell, problems]) => this.apply(cell, problems)),
      ...stale.map(cell => this.apply(cell, []))
    ]);
  }

  private async apply(cell: Cell, problems: IProblem[]): Promise<void> {
    await cell.ready;
    const editor = cell.editor as CodeMirrorEditor | null;
    if (!editor || cell.isDisposed) {
      return;
    }
    const view = editor.editor;
    const diagnostics = problems
      .map(p => toDiagnostic(view.state.doc, p))
      .filter((d): d is Diagnostic => d !== null);
    const gutter = diagnostics.length ? GUTTER : [];
    if (this.gutters.has(view)) {
      view.dispatch({ effects: gutterSlot.reconfigure(gutter) });
    } else if (diagnostics.length) {
      view.dispatch({ effects: StateEffect.appendConfig.of(gutterSlot.of(gutter)) });
      this.gutters.add(view);
    } else {
      return; // never marked: nothing to clear
    }
    view.dispatch(setDiagnostics(view.state, diagnostics));
    if (diagnostics.length) {
      this.marked.add(cell);
    } else {
      this.marked.delete(cell);
    }
  }
}

/** The bundle's own place in the output area: a one-line pointer to the marks. */
export class DiagnosticsNote extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jp-cudakit-diagnostics-note');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const bundle = model.data[DIAGNOSTICS_MIME] as unknown as IBundle;
    const lines = [...new Set(bundle.diagnostics.map(d => d.line))].sort((a, b) => a - b);
    const where = bundle.kernel ? `the %%cuda cell of '${bundle.kernel}'` : 'this cell';
    this.node.textContent =
      `${bundle.error}: marked at line${lines.length > 1 ? 's' : ''} ` +
      `${lines.join(', ')} of ${where}`;
  }
}
