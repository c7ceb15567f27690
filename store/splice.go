package store

import (
	"bytes"
	"encoding/json"
)

// contentHole is what an event referencing a message (EventAppendParams.
// MessageRef) keeps in the place of the message's content.
var contentHole = []byte(`"content":""`)

// SpliceContent returns tmpl, an event stored with EventAppendParams.MessageRef,
// with content (encoded as encoding/json encodes a string, HTML characters
// escaped) as the value of its first "content" key. A JSON string cannot
// hold the bytes "content":"" unescaped, so the first match is a key. tmpl
// without such a key is returned as it is.
func SpliceContent(tmpl []byte, content string) json.RawMessage {
	i := bytes.Index(tmpl, contentHole)
	if i < 0 {
		return tmpl
	}
	enc, err := json.Marshal(content)
	if err != nil {
		return tmpl
	}
	at := i + len(contentHole) - 2
	out := make([]byte, 0, len(tmpl)+len(enc)-2)
	out = append(out, tmpl[:at]...)
	out = append(out, enc...)
	return append(out, tmpl[at+2:]...)
}
