import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import { afterEach } from 'vitest'

afterEach(() => {
  cleanup()
  // The cards keep drafts in localStorage: no test sees another's.
  localStorage.clear()
})

// A loaded CI machine can be slow; these are deadlines, not timing assertions.
configure({ asyncUtilTimeout: 10_000 })
