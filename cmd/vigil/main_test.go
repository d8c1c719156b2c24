package main

import (
	"os"
	"testing"
)

// envRunMain makes the test binary act as vigil itself: the golden tests
// run it as a child process, so each run starts with fresh flags, and what
// commands print straight to os.Stdout and os.Stderr is captured too.
const envRunMain = "VIGIL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
