package config

import (
	"fmt"
	"strings"
)

// Error is one problem of a configuration file: where it is (File, Line;
// Line 0 when the file as a whole is wrong) and which key (a path such as
// agents[1].approval.write_file; empty for the document itself).
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

// Error formats e as "file:line: key: message", the way compilers do, so
// editors can jump to it.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem Parse found, in file order. Parse returns it as
// its error; errors.As reaches it.
type Errors []*Error

// Error joins the problems, one a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
