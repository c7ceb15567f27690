/// <reference types="vitest/config" />
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

// The page is served by the Go binary (web/embed.go) from dist/; in dev mode
// Vite proxies /api to a running `luban serve` (LUBAN_URL, default :8080).
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets' },
  server: {
    proxy: { '/api': process.env.LUBAN_URL ?? 'http://127.0.0.1:8080' },
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}', 'packages/*/src/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    // One jsdom and one module graph per worker, not per file: with the
    // defaults (a fresh process and jsdom for each of the 27 files) the
    // environments alone took 93 s of a 213 s run on 2 cores, and 666 s
    // under load; shared, the run takes 38 s (docs/design.md §27). The
    // setup file clears the DOM and localStorage after every test.
    pool: 'threads',
    isolate: false,
  },
})
