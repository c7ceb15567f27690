package lubantest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func setupAddrWriter(t *testing.T) (*addrWriter, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	return &addrWriter{w: &log, found: make(chan string, 1)}, &log
}

// The serving line may arrive split across writes; its URL is reported once
// and every byte still reaches the log.
func TestAddrWriterSplitLine(t *testing.T) {
	t.Parallel()
	aw, log := setupAddrWriter(t)
	out := "starting\nluban serv" + "ing on http://127.0.0.1:4321/\nopen http://127.0.0.1:4321/?token=x\n" +
		"luban serving on http://127.0.0.1:9/\n"
	for _, part := range []string{out[:12], out[12:30], out[30:]} {
		n, err := aw.Write([]byte(part))
		require.NoError(t, err)
		require.Equal(t, len(part), n)
	}
	require.Equal(t, out, log.String())
	require.Equal(t, "http://127.0.0.1:4321/", <-aw.found)
	require.Empty(t, aw.found, "reported once")
}

// Without a complete line nothing is reported.
func TestAddrWriterIncompleteLine(t *testing.T) {
	t.Parallel()
	aw, _ := setupAddrWriter(t)
	_, err := aw.Write([]byte("luban serving on http://127.0.0.1:4321/"))
	require.NoError(t, err)
	require.Empty(t, aw.found)
}
