//go:build linux

package cgroup

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitEmptyHonoursCancelledContext: a wait whose context is already
// cancelled ends with the context's error, never by running into its
// deadline: a cancellation (a signal cutting the grace period short) must
// not be lost to the deadline being armed after it.
func TestWaitEmptyHonoursCancelledContext(t *testing.T) {
	s := newSession(t)
	startIn(t, s.FD())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The race is between two goroutines, so it takes many attempts to
	// show; each attempt holds an inotify instance until its background
	// close completes, and the per-user limit is typically 128.
	for i := 0; i < 100; i++ {
		err := s.WaitEmpty(ctx, time.Now().Add(time.Hour))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt %d: WaitEmpty with a cancelled context: %v, want context.Canceled", i, err)
		}
	}
}
