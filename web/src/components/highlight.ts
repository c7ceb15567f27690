// The code highlighter, loaded only when a fenced code block with a known
// language is shown (CodeBlock imports this module dynamically), so the first
// load carries none of it. lowlight runs highlight.js grammars and returns a
// hast tree that becomes React elements: no HTML string, no innerHTML.
import { toJsxRuntime } from 'hast-util-to-jsx-runtime'
import bash from 'highlight.js/lib/languages/bash'
import css from 'highlight.js/lib/languages/css'
import diff from 'highlight.js/lib/languages/diff'
import dockerfile from 'highlight.js/lib/languages/dockerfile'
import go from 'highlight.js/lib/languages/go'
import ini from 'highlight.js/lib/languages/ini'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import markdown from 'highlight.js/lib/languages/markdown'
import python from 'highlight.js/lib/languages/python'
import rust from 'highlight.js/lib/languages/rust'
import shell from 'highlight.js/lib/languages/shell'
import sql from 'highlight.js/lib/languages/sql'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'
import { createLowlight } from 'lowlight'
import type { ReactNode } from 'react'
import { Fragment, jsx, jsxs } from 'react/jsx-runtime'

const lowlight = createLowlight({ bash, css, diff, dockerfile, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml })

/** MAX_CHARS bounds the text highlighted; longer code stays plain (the grammars are regex-driven). */
export const MAX_CHARS = 50_000

/**
 * highlight returns `code` as highlighted React nodes (spans with hljs-*
 * classes, every piece of code a text node), or null when the language is
 * not one of the registered grammars or aliases (js, ts, sh, py, yml, html,
 * toml, …) or the code is longer than MAX_CHARS.
 */
export function highlight(code: string, lang: string): ReactNode | null {
  if (!lang || code.length > MAX_CHARS || !lowlight.registered(lang)) return null
  const tree = lowlight.highlight(lang, code)
  return toJsxRuntime(tree, { Fragment, jsx, jsxs })
}
