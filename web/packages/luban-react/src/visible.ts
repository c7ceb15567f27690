// Model text shown as plain text must read as what it is: bidirectional
// control characters could make "gnp.exe" look like "exe.png" (Trojan
// Source, CVE-2021-42574), so they are shown as visible markers.

/**
 * BIDI_CONTROLS matches the invisible bidirectional controls: U+200E/U+200F
 * (LRM/RLM), U+061C (ALM), U+202A–U+202E (embeddings and overrides) and
 * U+2066–U+2069 (isolates).
 */
export const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * visible returns s with every bidirectional control replaced by a visible
 * marker naming its code point, e.g. "\u202E" → "⟨U+202E⟩"; other text is
 * unchanged. Use it wherever a model-provided string (a card's title, label,
 * description, preview, context, a receipt's labels, a tool's output) is
 * rendered as text. It is for display only: answers keep the raw strings.
 */
export function visible(s: string): string
export function visible(s: string | undefined): string | undefined
export function visible(s: string | undefined): string | undefined {
  if (s === undefined || s === null) return s
  return String(s).replace(BIDI_CONTROLS, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`)
}
