/**
 * CUDA C++ for CodeMirror 6: the C++ language of @codemirror/lang-cpp plus CUDA's
 * qualifiers, built-in variables, vector types and intrinsics, and the `%%cuda` line.
 *
 * Lezer's C++ grammar parses CUDA sources well (a qualifier such as `__global__` is an
 * identifier to it), so CUDA's own words are marked on top of the C++ highlighting
 * with a match decorator rather than a second grammar.
 *
 *   new EditorView({ extensions: [cudaLanguage()] })
 */
import { cpp } from '@codemirror/lang-cpp';
import { LanguageSupport, syntaxHighlighting } from '@codemirror/language';
import { RangeSetBuilder } from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  MatchDecorator,
  ViewPlugin,
  ViewUpdate
} from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';

/** The MIME type JupyterLab gives `%%cuda` cells and `.cu` files. */
export const CUDA_MIME = 'text/x-cuda';

const QUALIFIERS = [
  '__global__', '__device__', '__host__', '__shared__', '__constant__', '__managed__',
  '__restrict__', '__noinline__', '__forceinline__', '__launch_bounds__',
  '__grid_constant__', '__align__'
];
const BUILTINS = ['threadIdx', 'blockIdx', 'blockDim', 'gridDim', 'warpSize'];
const TYPES = [
  'dim3', 'half', '__half', '__half2', '__nv_bfloat16', '__nv_bfloat162', 'cudaStream_t',
  'cudaEvent_t', 'cudaError_t'
];
const VECTOR = '(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]';
// __syncthreads, __shfl_down_sync, __ldg, __expf, atomicAdd, rsqrtf, clock64, ...
const INTRINSIC =
  '__(?!\\w*__\\b)[a-z]\\w*|atomic[A-Z][A-Za-z]*|rn?sqrtf?|rcbrtf?|clock(?:64)?|' +
  '__popc(?:ll)?|fmaf?|saturatef?|make_(?:u?char|u?short|u?int|u?long|float|double)[1-4]';

function words(list: string[]): string {
  return list.map(w => w.replace(/\$/g, '\\$')).join('|');
}

const CLASS_OF: Record<string, string> = {
  qualifier: 'cm-cuda-qualifier',
  builtin: 'cm-cuda-builtin',
  type: 'cm-cuda-type',
  intrinsic: 'cm-cuda-intrinsic'
};

const WORD = new RegExp(
  `\\b(?:(?<qualifier>${words(QUALIFIERS)})|(?<builtin>${words(BUILTINS)})|` +
    `(?<type>${words(TYPES)}|${VECTOR})|(?<intrinsic>${INTRINSIC}))\\b`,
  'g'
);

const marks = Object.fromEntries(
  Object.entries(CLASS_OF).map(([kind, cls]) => [kind, Decoration.mark({ class: cls })])
);

const cudaWords = new MatchDecorator({
  regexp: WORD,
  decoration: match => {
    const groups = match.groups ?? {};
    const kind = Object.keys(CLASS_OF).find(k => groups[k] !== undefined) ?? 'intrinsic';
    return marks[kind];
  }
});

const magicLine = Decoration.mark({ class: 'cm-cuda-magic' });

/** The `%%cuda ...` line, shown as a directive rather than as broken C++. */
function magicDecorations(view: EditorView): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  const first = view.state.doc.line(1);
  if (/^%%cuda\b/.test(first.text)) {
    builder.add(first.from, first.to, magicLine);
  }
  return builder.finish();
}

const cudaHighlights = ViewPlugin.fromClass(
  class {
    words: DecorationSet;
    magic: DecorationSet;
    constructor(view: EditorView) {
      this.words = cudaWords.createDeco(view);
      this.magic = magicDecorations(view);
    }
    update(update: ViewUpdate): void {
      this.words = cudaWords.updateDeco(update, this.words);
      if (update.docChanged) {
        this.magic = magicDecorations(update.view);
      }
    }
  },
  {
    provide: plugin => [
      EditorView.decorations.of(view => view.plugin(plugin)?.words ?? Decoration.none),
      EditorView.decorations.of(view => view.plugin(plugin)?.magic ?? Decoration.none)
    ]
  }
);

/** CUDA C++ language support: C++ parsing and highlighting, CUDA words on top. */
export function cudaLanguage(): LanguageSupport {
  const base = cpp();
  // classHighlighter adds stable `tok-*` classes next to JupyterLab's theme colours.
  return new LanguageSupport(base.language, [
    base.support,
    syntaxHighlighting(classHighlighter),
    cudaHighlights
  ]);
}

/** True when a cell's source makes it a CUDA cell (its first line is `%%cuda`). */
export function isCudaSource(source: string): boolean {
  return /^%%cuda(?:\s|$)/.test(source);
}
