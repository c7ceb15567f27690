import { describe, expect, it } from 'vitest'
import { visible } from './visible'

describe('visible', () => {
  it('marks every bidirectional control and keeps other text', () => {
    expect(visible('gnp\u202E.exe')).toBe('gnp⟨U+202E⟩.exe')
    const all = '\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069'
    expect(visible(`a${all}b`)).toBe(
      'a⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩b',
    )
    expect(visible(all)).not.toMatch(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
  })

  it('marks the other control characters, keeping tab, newline and carriage return', () => {
    expect(visible('a\u0000b\u202E evil')).toBe('a⟨U+0000⟩b⟨U+202E⟩ evil')
    expect(visible('\u001B[31mred\u007F\u0085')).toBe('⟨U+001B⟩[31mred⟨U+007F⟩⟨U+0085⟩')
    expect(visible('a\tb\nc\r\n')).toBe('a\tb\nc\r\n')
  })

  it('leaves ordinary text, Arabic and Hebrew, emoji and zero-width joiners alone', () => {
    for (const s of ['', '先分析 🌏', 'مرحبا', 'שלום', '👩\u200D💻', 'a\u200Bb', '<img src=x>']) expect(visible(s)).toBe(s)
    expect(visible(undefined)).toBeUndefined()
  })
})
