//go:build unix

package hostinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestLocal(t *testing.T) {
	h := Local()
	if h.OS != runtime.GOOS || h.Arch != runtime.GOARCH {
		t.Fatalf("os/arch %s/%s, want %s/%s", h.OS, h.Arch, runtime.GOOS, runtime.GOARCH)
	}
	if h.Kernel == "" {
		t.Fatal("no kernel release from uname")
	}
	if want := h.OS + "-" + h.Arch + "-" + h.Kernel; h.HostClass != want || strings.Count(h.HostClass, "-") < 2 {
		t.Fatalf("host class %q, want %q", h.HostClass, want)
	}
}
