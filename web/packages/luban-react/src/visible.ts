// Model text shown as plain text must read as what it is: bidirectional
// control characters could make "gnp.exe" look like "exe.png" (Trojan
// Source, CVE-2021-42574), and other control characters (NUL, ESC, ...)
// render as nothing or as a tofu box, so they are shown as visible markers.

/**
 * BIDI_CONTROLS matches the invisible bidirectional controls: U+200E/U+200F
 * (LRM/RLM), U+061C (ALM), U+202A–U+202E (embeddings and overrides) and
 * U+2066–U+2069 (isolates).
 */
export const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * INVISIBLE matches what visible marks: the BIDI_CONTROLS and the other
 * control characters (Unicode category Cc: U+0000–U+001F, U+007F–U+009F)
 * except tab, line feed and carriage return, which are ordinary white space.
 * Zero-width joiners and spaces are left alone (emoji sequences, scripts
 * that need them).
 */
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * visible returns s with every bidirectional control and every other control
 * character but tab, line feed and carriage return replaced by a visible
 * marker naming its code point, e.g. "\u202E" → "⟨U+202E⟩", "\u0000" →
 * "⟨U+0000⟩"; other text is unchanged. Use it wherever a model- or
 * host-provided string (a card's title, label, description, preview, context,
 * a receipt's labels, a tool's output, a session's title) is rendered as
 * text. It is for display only: answers and titles keep the raw strings.
 */
export function visible(s: string): string
export function visible(s: string | undefined): string | undefined
export function visible(s: string | undefined): string | undefined {
  if (s === undefined || s === null) return s
  return String(s).replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`)
}
