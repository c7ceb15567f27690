package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of a tool call's arguments that were rejected (ask arguments that
// do not parse, other arguments that are not JSON): above
// maxRejectedArgumentsBytes they are stored, streamed and sent back to the
// model as their first keptRejectedArgumentsBytes followed by a note naming
// their length, SHA-256 and why they were rejected. Valid arguments are kept
// whole.
const (
	maxRejectedArgumentsBytes  = 4 << 10
	keptRejectedArgumentsBytes = 1 << 10
	maxRejectionBytes          = 300
	truncatedArgumentsMark     = "\n[luban: arguments truncated from "
)

// boundArguments returns args as stored when they were rejected for reason:
// unchanged when short, otherwise a prefix cut on a character boundary and
// the note of truncatedArguments.
func boundArguments(args string, reason error) string {
	if len(args) <= maxRejectedArgumentsBytes {
		return args
	}
	sum := sha256.Sum256([]byte(args))
	return cutUTF8(args, keptRejectedArgumentsBytes) + truncatedArgumentsMark +
		fmt.Sprintf("%d bytes, sha256 %s; rejected: %s]", len(args), hex.EncodeToString(sum[:]), cutUTF8(reason.Error(), maxRejectionBytes))
}

// truncatedArguments reports whether args is the stored form boundArguments
// made, and then the error text the call's ToolResult gives the model.
func truncatedArguments(args string) (string, bool) {
	i := strings.LastIndex(args, truncatedArgumentsMark)
	if i < 0 || !strings.HasSuffix(args, "]") {
		return "", false
	}
	note := args[i+len(truncatedArgumentsMark) : len(args)-1]
	size, reason, ok := strings.Cut(note, "; rejected: ")
	if !ok {
		return "", false
	}
	return reason + " (the arguments were " + size + "; luban keeps only their beginning)", true
}

// cutUTF8 returns at most n bytes of s, never splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
