package server

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// writeEvent writes one event as a server-sent events frame (WHATWG HTML
// "server-sent events", the event stream format):
//
//	id: <seq>
//	event: <name>
//	data: <one line of data>      (one such line per line of data)
//	<blank line>
//
// CRLF, CR and LF each end a line of that format, so every line break in
// data starts a new "data: " line instead of ending the frame or starting a
// field: whatever data holds, a reader sees exactly this one event, with this
// id and name, and data with its line breaks as LF. The event log holds
// compact JSON, one line, so data normally fits one "data: " line. A name
// is written without its line breaks.
func writeEvent(w io.Writer, seq int64, name string, data []byte) error {
	var f frames
	return f.write(w, seq, name, data)
}

// frames writes the frames of one stream (writeEvent's format) through one
// buffer, kept from frame to frame: a stream allocates for its largest
// frame, not for each. The Writer a frame goes to must not keep the bytes
// it was given (net/http's ResponseWriter copies them).
type frames struct{ buf []byte }

func (f *frames) write(w io.Writer, seq int64, name string, data []byte) error {
	buf := f.buf[:0]
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, "\nevent: "...)
	if strings.ContainsAny(name, "\r\n") {
		name = strings.NewReplacer("\r", "", "\n", "").Replace(name)
	}
	buf = append(buf, name...)
	buf = append(buf, '\n')
	for {
		buf = append(buf, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			buf = append(buf, data...)
			buf = append(buf, '\n')
			break
		}
		buf = append(buf, data[:i]...)
		buf = append(buf, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	buf = append(buf, '\n')
	f.buf = buf
	_, err := w.Write(buf)
	return err
}
