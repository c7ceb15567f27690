import { useState } from 'react'
import { useT } from '../i18n'
import type { Receipt } from '../types'

/**
 * SignedMark shows that a receipt can be verified (docs/design.md §17): a
 * "signed" chip when the receipt carries its Ed25519 signature (a compact
 * JWS), and, opened, the JWS with a button that copies it and one that
 * downloads the receipt as JSON for `luban verify`. Nothing for an
 * unsigned receipt.
 */
export function SignedMark({ receipt }: { receipt: Receipt }) {
  const t = useT()
  const [copied, setCopied] = useState(false)
  const jws = receipt.signature
  if (!jws) return null
  const download = () => {
    const blob = new Blob([JSON.stringify(receipt, null, 2) + '\n'], { type: 'application/json' })
    const url = URL.createObjectURL(blob)
    const a = document.createElement('a')
    a.href = url
    a.download = `receipt-${receipt.requestId}.json`
    a.click()
    setTimeout(() => URL.revokeObjectURL(url), 0)
  }
  return (
    <details className="receipt-signed" data-testid="receipt-signed">
      <summary>
        <span className="chip chip-signed" title={t.signedHint}>
          {t.signed}
        </span>
      </summary>
      <textarea className="receipt-jws" readOnly rows={3} value={jws} aria-label={t.signature} data-testid="receipt-jws" />
      <div className="receipt-signed-actions">
        <button
          type="button"
          data-testid="receipt-copy"
          onClick={() => {
            void navigator.clipboard?.writeText(jws).then(() => setCopied(true))
          }}
        >
          {copied ? t.copied : t.copySignature}
        </button>
        <button type="button" data-testid="receipt-download" onClick={download}>
          {t.downloadReceipt}
        </button>
      </div>
    </details>
  )
}
