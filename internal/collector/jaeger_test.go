//go:build linux

package collector

import (
	"context"
	"os"
	"syscall"
	"testing"

	"vigil/internal/testenv"
)

// TestStartStop: Jaeger starts on free ports, answers, and Stop leaves no
// process and no directory behind.
func TestStartStop(t *testing.T) {
	bin, err := FindJaeger()
	if err != nil {
		testenv.RequireTool(t, "jaeger ("+err.Error()+")")
	}
	j, err := Start(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	pid, dir := j.cmd.Process.Pid, j.dir
	if _, found, err := j.Trace(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736"); err != nil || found {
		t.Fatalf("unknown trace: found %v, err %v", found, err)
	}
	if err := j.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("jaeger pid %d still alive after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind: %v", dir, err)
	}
	if err := j.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}
