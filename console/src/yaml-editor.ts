// The studio's YAML editor: CodeMirror 6 with YAML highlighting, line numbers, undo history and
// lint diagnostics placed on their lines. Loaded with import() by the studio only, so esbuild
// puts it (and CodeMirror) in chunks of their own that no other page downloads. It knows nothing
// of React or of the API: the studio gives it text and diagnostics and hears of every change.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import { defaultHighlightStyle, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { StyleModule } from 'style-mod';

/**
 * CodeMirror's styles, through a constructed stylesheet adopted by the document. style-mod (which
 * CodeMirror uses) would put them in a <style> element, which the console's CSP (`style-src
 * 'self'`, no inline style) refuses, leaving the editor unstyled; a constructed sheet is not
 * inline markup, so the policy stays as strict. Module order is kept as style-mod keeps it:
 * later modules take precedence.
 */
function adoptCodeMirrorStyles(): void {
  if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in document)) return;
  const sheet = new CSSStyleSheet();
  const mounted: StyleModule[] = [];
  StyleModule.mount = (_root, modules) => {
    const list = Array.isArray(modules) ? modules : [modules];
    let changed = false;
    let j = 0;
    for (const module of list) {
      let index = mounted.indexOf(module);
      if (index > -1 && index < j) {
        mounted.splice(index, 1);
        j--;
        index = -1;
      }
      if (index === -1) {
        mounted.splice(j++, 0, module);
        changed = true;
      } else {
        j = index + 1;
      }
    }
    if (changed) sheet.replaceSync(mounted.map((m) => m.getRules()).join('\n'));
    if (!document.adoptedStyleSheets.includes(sheet)) {
      document.adoptedStyleSheets = [sheet, ...document.adoptedStyleSheets];
    }
  };
}
adoptCodeMirrorStyles();

/** A problem on a line (1-based), or on the whole text when `line` is undefined. */
export interface EditorProblem {
  readonly line: number | undefined;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

export interface YamlEditor {
  /** Replaces the whole text (not undoable as typing is: a new document). */
  setText(text: string): void;
  /** Shows these problems in place of the previous ones. */
  setProblems(problems: readonly EditorProblem[]): void;
  focus(): void;
  destroy(): void;
}

export interface YamlEditorOptions {
  readonly text: string;
  readonly onChange: (text: string) => void;
  /** Local checks run as one types (a YAML syntax error), shown with the server's. */
  readonly check: (text: string) => readonly EditorProblem[];
  /** Ids of the label and the hint, for screen readers. */
  readonly labelledBy: string;
  readonly describedBy?: string;
}

// Colours chosen for at least 4.5:1 on white (the keys, strings, numbers and comments of YAML).
const highlight = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: '#1849a9' },
  { tag: [tags.string, tags.special(tags.string)], color: '#166534' },
  { tag: [tags.number, tags.bool, tags.null], color: '#9a3412' },
  { tag: tags.comment, color: '#4a4a4a', fontStyle: 'italic' },
  { tag: [tags.keyword, tags.operator, tags.punctuation, tags.separator], color: '#5b21b6' },
]);

const theme = EditorView.theme({
  '&': { border: '1px solid #6b7280', borderRadius: '5px', background: '#ffffff', fontSize: '0.9rem' },
  '&.cm-focused': { outline: '3px solid #1849a9', outlineOffset: '2px' },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    minHeight: '16rem',
    maxHeight: '32rem',
  },
  '.cm-gutters': { background: '#f4f6f8', color: '#4a4a4a', borderRight: '1px solid #c9d1d9' },
  '.cm-activeLine': { background: '#eef3fb' },
  '.cm-diagnosticText': { whiteSpace: 'pre-wrap' },
});

function toDiagnostics(view: EditorView, problems: readonly EditorProblem[]): Diagnostic[] {
  const doc = view.state.doc;
  return problems.map((p) => {
    const line = doc.line(Math.min(Math.max(1, p.line ?? 1), doc.lines));
    return {
      from: p.line === undefined ? 0 : line.from,
      to: p.line === undefined ? 0 : line.to,
      severity: p.severity,
      message: p.message,
    };
  });
}

export function createYamlEditor(parent: HTMLElement, options: YamlEditorOptions): YamlEditor {
  /** The server's problems (a dry run's), kept until the text changes. */
  let serverProblems: readonly EditorProblem[] = [];
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        lineNumbers(),
        history(),
        highlightActiveLine(),
        yaml(),
        syntaxHighlighting(highlight),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        lintGutter(),
        linter((v) => toDiagnostics(v, [...options.check(v.state.doc.toString()), ...serverProblems]), {
          delay: 300,
        }),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({
          'aria-labelledby': options.labelledBy,
          ...(options.describedBy === undefined ? {} : { 'aria-describedby': options.describedBy }),
          'aria-multiline': 'true',
          role: 'textbox',
          spellcheck: 'false',
          'data-testid': 'yaml-editor',
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          serverProblems = [];
          options.onChange(update.state.doc.toString());
        }),
        theme,
      ],
    }),
  });
  return {
    setText(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setProblems(problems) {
      serverProblems = problems;
      // Shown at once (the linter itself runs only after an edit, and then drops these).
      const local = options.check(view.state.doc.toString());
      view.dispatch(setDiagnostics(view.state, toDiagnostics(view, [...local, ...serverProblems])));
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
