/**
 * cudakit's JupyterLab extension: `%%cuda` cells highlighted as CUDA C++, compile and
 * launch errors marked at their lines, the engine and GPU memory in the status bar.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import {
  INotebookTracker,
  Notebook,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IStatusBar } from '@jupyterlab/statusbar';

import { CUDA_MIME, cudaLanguage, isCudaSource } from './cuda';
import { DIAGNOSTICS_MIME, DiagnosticsNote, NotebookMarks } from './marks';
import { EngineStatus } from './status';

/** Give a code cell the CUDA MIME type while its first line is `%%cuda`. */
function followLanguage(notebook: Notebook, model: ICellModel): void {
  const update = () => {
    const cuda = isCudaSource(model.sharedModel.getSource());
    const wanted = cuda ? CUDA_MIME : notebook.codeMimetype;
    if (model.mimeType !== wanted && (cuda || model.mimeType === CUDA_MIME)) {
      model.mimeType = wanted;
    }
  };
  model.sharedModel.changed.connect((_, change) => change.sourceChange && update());
  model.mimeTypeChanged.connect(update);
  update();
}

function watchNotebook(panel: NotebookPanel, marks: Map<Notebook, NotebookMarks>): void {
  const notebook = panel.content;
  const seen = new WeakSet<ICellModel>();
  const follow = () => {
    const cells = notebook.model?.cells;
    for (let i = 0; cells && i < cells.length; i++) {
      const model = cells.get(i);
      if (model.type === 'code' && !seen.has(model)) {
        seen.add(model);
        followLanguage(notebook, model);
      }
    }
  };
  void panel.context.ready.then(() => {
    follow();
    notebook.model?.cells.changed.connect(follow);
    marks.set(notebook, new NotebookMarks(panel));
  });
  panel.disposed.connect(() => marks.delete(notebook));
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'cudakit-jupyterlab:plugin',
  description: 'CUDA highlighting, errors at their lines and the engine in the status bar',
  autoStart: true,
  requires: [IEditorLanguageRegistry, INotebookTracker, IRenderMimeRegistry],
  optional: [IStatusBar],
  activate: (
    app: JupyterFrontEnd,
    languages: IEditorLanguageRegistry,
    tracker: INotebookTracker,
    rendermime: IRenderMimeRegistry,
    statusBar: IStatusBar | null
  ) => {
    languages.addLanguage({
      name: 'CUDA',
      displayName: 'CUDA C++',
      mime: CUDA_MIME,
      extensions: ['cu', 'cuh'],
      support: cudaLanguage()
    });
    rendermime.addFactory(
      { safe: true, mimeTypes: [DIAGNOSTICS_MIME], createRenderer: () => new DiagnosticsNote() },
      0
    );
    const marks = new Map<Notebook, NotebookMarks>();
    tracker.widgetAdded.connect((_, panel) => watchNotebook(panel, marks));
    tracker.forEach(panel => watchNotebook(panel, marks));
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      marks.get(notebook)?.dismissFor((cell as Cell).model);
    });
    if (statusBar) {
      statusBar.registerStatusItem('cudakit-jupyterlab:engine', {
        item: new EngineStatus(),
        align: 'left',
        rank: 100
      });
    }
  }
};

export default plugin;
