//go:build !lubantest

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// The shipped build (no lubantest tag) has no test tools and no fault
// injection: asking for them refuses to start.
func TestShippedBuildRefusesTestHooks(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{{"LUBAN_TEST_TOOLS": "1"}, {"LUBAN_FAULT": "interaction_committed"}} {
		c := &Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}
		err := c.Run(t.Context(), []string{"--db", "memory", "--auth-token", "t", "--addr", "127.0.0.1:0", "--model", "scripted"})
		require.ErrorIs(t, err, errNoTestHooks, "env %v", env)
	}
}
