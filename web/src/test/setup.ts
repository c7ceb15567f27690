import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import { afterEach } from 'vitest'

afterEach(() => cleanup())

// A loaded CI machine can be slow; these are deadlines, not timing assertions.
configure({ asyncUtilTimeout: 10_000 })
