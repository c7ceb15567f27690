import { describe, expect, it } from 'vitest'
import { errorText, fieldCodeText, fieldErrorText } from './errorText'
import { cardDicts } from './i18n'
import type { FieldCode } from './types'

describe('fieldErrorText', () => {
  it('words a code with its params in Chinese and English', () => {
    expect(fieldErrorText('zh', { field: 'selections', code: 'too_many', params: { max: 2, got: 3 }, message: 'at most 2' })).toBe('最多 2 项')
    expect(fieldErrorText('en', { field: 'selections', code: 'too_many', params: { max: 2, got: 3 }, message: 'at most 2' })).toBe('At most 2 items')
    expect(fieldErrorText('zh', { field: 'content.age', code: 'out_of_range', params: { min: 1, max: 100 }, message: 'x' })).toBe('应在 1 到 100 之间')
    expect(fieldErrorText('en', { field: 'content.age', code: 'out_of_range', params: { min: 1 }, message: 'x' })).toBe('Must be at least 1')
    expect(fieldErrorText('zh', { field: 'selections[0]', code: 'unknown_option', params: { option: 'x' }, message: 'x' })).toBe('没有“x”这个选项')
    expect(fieldErrorText('en', { field: 'customInput', code: 'outside_workspace', params: { path: '../x' }, message: 'x' })).toBe('"../x" is outside the workspace: enter a path relative to it')
    expect(fieldErrorText('en', { field: 'content.n', code: 'out_of_range', params: { exclusiveMin: 0, max: 9 }, message: 'x' })).toBe('Must be more than 0 and at most 9')
    expect(fieldErrorText('zh', { field: 'answers', code: 'too_few', params: { min: 1, unit: 'properties' }, message: 'x' })).toBe('至少 1 个属性')
    expect(fieldErrorText('en', { field: 'x', code: 'too_short', params: { min: 1, unit: 'characters' }, message: 'x' })).toBe('Too short: at least 1 character')
    expect(fieldErrorText('zh', { field: 'customInput', code: 'too_long', params: { max: 4096, got: 5000, unit: 'bytes' }, message: 'x' })).toBe('太长了，最多 4096 字节')
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

  it('an unknown field is said by what holds it', () => {
    expect(fieldErrorText('zh', { field: 'arguments.mode', code: 'unknown_field', message: 'x' })).toBe('工具的参数里没有这一项')
    expect(fieldErrorText('en', { field: 'content.extra', code: 'unknown_field', message: 'x' })).toBe('The form has no such field')
    expect(fieldErrorText('en', { field: 'answers[0].note', code: 'unknown_field', message: 'x' })).toBe('This question has no such field')
  })

  it('params of the wrong type are not shown', () => {
    expect(fieldErrorText('en', { field: 'x', code: 'too_few', params: { min: { evil: 1 } }, message: 'm' })).toBe('Too few')
    expect(fieldErrorText('en', { field: 'x', code: 'enum', params: { allowed: [{}, 'a'] }, message: 'm' })).toBe('Must be one of a')
  })

  it('falls back to the message for an unknown code or none, then to the code', () => {
    expect(fieldErrorText('zh', { field: 'x', code: 'brand_new' as never, message: 'server says' })).toBe('server says')
    expect(fieldErrorText('zh', { field: 'x', code: 'invalid', message: 'must be even' })).toBe('must be even')
    expect(fieldErrorText('zh', { field: 'x', message: 'server says' })).toBe('server says')
    expect(fieldErrorText('zh', { field: 'x', code: 'brand_new' as never, message: '' })).toBe('brand_new')
  })

  it('zh and en word the same codes, every FieldCode but invalid', () => {
    expect(Object.keys(fieldCodeText.zh).sort()).toEqual(Object.keys(fieldCodeText.en).sort())
    const all: Record<Exclude<FieldCode, 'invalid'>, true> = {
      required: true, unknown_field: true, invalid_type: true, invalid_json: true, too_few: true, too_many: true, unknown_option: true,
      unknown_question: true, duplicate: true, too_long: true, too_short: true, out_of_range: true, not_multiple: true, pattern: true,
      format: true, enum: true, not_allowed: true, conflict_with_answer_kind: true, no_question: true, outside_workspace: true,
      no_workspace: true, not_directory: true, is_directory: true, invalid_path: true,
    }
    expect(Object.keys(fieldCodeText.zh).sort()).toEqual(Object.keys(all).sort())
  })
})

describe('errorText', () => {
  it('words the routing refusals in each language, not the server English', () => {
    expect(errorText(cardDicts.zh, { code: 'not_assignee', message: 'you are not one of the people this request waits for' })).toBe(
      '这个问题不是交给你的：只有它等待的人可以回答',
    )
    expect(errorText(cardDicts.en, { code: 'not_assignee', message: 'x' })).toBe('This question is not assigned to you: only the people it waits for can answer it')
    expect(errorText(cardDicts.zh, { code: 'already_decided', message: 'x' })).toBe('你已经对这个审批做过决定了')
  })
})
