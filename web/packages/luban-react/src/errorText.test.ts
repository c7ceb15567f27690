import { describe, expect, it } from 'vitest'
import { fieldCodeText, fieldErrorText } from './errorText'

describe('fieldErrorText', () => {
  it('words a code with its params in Chinese and English', () => {
    expect(fieldErrorText('zh', { field: 'selections', code: 'too_many', params: { max: 2 }, message: 'at most 2' })).toBe('最多选 2 项')
    expect(fieldErrorText('en', { field: 'selections', code: 'too_many', params: { max: 2 }, message: 'at most 2' })).toBe('Choose at most 2')
    expect(fieldErrorText('zh', { field: 'content.age', code: 'out_of_range', params: { min: 1, max: 100 }, message: 'x' })).toBe('应在 1 到 100 之间')
    expect(fieldErrorText('en', { field: 'content.age', code: 'out_of_range', params: { min: 1 }, message: 'x' })).toBe('Must be at least 1')
    expect(fieldErrorText('zh', { field: 'selections[0]', code: 'unknown_option', params: { option: 'x' }, message: 'x' })).toBe('没有“x”这个选项')
    expect(fieldErrorText('en', { field: 'customInput', code: 'outside_workspace', message: 'x' })).toMatch(/inside the workspace/)
    expect(fieldErrorText('zh', { field: 'customInput', code: 'too_long', params: { limit: 4096 }, message: 'x' })).toBe('太长了，最多 4096 个字')
    expect(fieldErrorText('en', { field: 'content.mail', code: 'format', params: { format: 'email' }, message: 'x' })).toBe('Enter an email address')
  })

  it('without params a code still gets a sentence', () => {
    for (const lang of ['zh', 'en'] as const)
      for (const [code, words] of Object.entries(fieldCodeText[lang])) {
        const s = words({})
        expect(s, `${lang} ${code}`).not.toBe('')
        expect(s, `${lang} ${code}`).not.toMatch(/undefined|\[object/)
      }
  })

  it('params of the wrong type are not shown', () => {
    expect(fieldErrorText('en', { field: 'x', code: 'too_few', params: { min: { evil: 1 } }, message: 'm' })).toBe('Too few chosen')
  })

  it('falls back to the message for an unknown code or none, then to the code', () => {
    expect(fieldErrorText('zh', { field: 'x', code: 'brand_new', message: 'server says' })).toBe('server says')
    expect(fieldErrorText('zh', { field: 'x', message: 'server says' })).toBe('server says')
    expect(fieldErrorText('zh', { field: 'x', code: 'brand_new', message: '' })).toBe('brand_new')
  })

  it('zh and en word the same codes', () => {
    expect(Object.keys(fieldCodeText.zh).sort()).toEqual(Object.keys(fieldCodeText.en).sort())
  })
})
