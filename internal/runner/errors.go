//go:build linux

package runner

import (
	"fmt"
	"strings"
)

// Exit codes of vigil record other than the child's own.
const (
	// ExitFailure is any failure of vigil itself: bad flags, missing
	// privileges, capture or archive errors.
	ExitFailure = 125
	// ExitCannotExecute: the command exists but cannot be executed.
	ExitCannotExecute = 126
	// ExitNotFound: the command was not found.
	ExitNotFound = 127
)

// Error is a runner failure with the exit code vigil should use.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func fail(format string, a ...any) *Error {
	return &Error{Code: ExitFailure, Err: fmt.Errorf(format, a...)}
}

func failCode(code int, format string, a ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, a...)}
}

// flatten renders err on one line (errors.Join separates with newlines).
func flatten(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
