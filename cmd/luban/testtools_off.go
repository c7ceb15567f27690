//go:build !lubantest

package main

import (
	"errors"
	"log/slog"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/people"
)

// errNoTestHooks is what a build without the lubantest tag says when asked
// for test hooks: the shipped binary has neither test tools nor fault
// injection.
var errNoTestHooks = errors.New("LUBAN_TEST_TOOLS and LUBAN_FAULT need a binary built with -tags lubantest (the test hooks are not in this build)")

// testHooks refuses LUBAN_TEST_TOOLS and LUBAN_FAULT: this build has no
// test hooks.
func testHooks(getenv func(string) string, _ *agent.Options, _ string, _ *slog.Logger) error {
	if getenv("LUBAN_TEST_TOOLS") != "" || getenv("LUBAN_FAULT") != "" {
		return errNoTestHooks
	}
	return nil
}

// dispatcherHooks does nothing: this build has no test hooks (testHooks
// already refused LUBAN_FAULT).
func dispatcherHooks(func(string) string, *people.DispatcherOptions, *slog.Logger) {}
