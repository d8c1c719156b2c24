//go:build linux

package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"vigil/internal/memcg"
	"vigil/internal/wire"
)

func TestProgressTerminalAndPlain(t *testing.T) {
	var tty bytes.Buffer
	p := NewProgress(&tty, true, 4)
	p.Begin("x1000", "C", 2, 0)
	p.End(wire.Sample{ID: "x1000.C.b2.t0", Valid: false, InvalidReason: "exit code 1"})
	p.Begin("x1000", "C", 2, 1)
	p.Finish()
	out := tty.String()
	for _, want := range []string{"\r\x1b[K[0/4] ETA ?  x1000 C block 2  discards 0", "discarded x1000.C.b2.t0: exit code 1\n", "[1/4] ETA", "re-measure 1  discards 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out)
		}
	}
	var plain bytes.Buffer
	p = NewProgress(&plain, false, 2)
	p.Begin("s500", "B", -1, 0)
	p.End(wire.Sample{ID: "s500.B.b-1.t0", Valid: true, Warmup: true, WallNS: 5e6, TreePeakBytes: -1})
	if got := plain.String(); got != "vigil bench: [1/2] s500.B.b-1.t0 wall 5ms peak n/a: warm-up\n" {
		t.Fatalf("plain output %q", got)
	}
}

// BenchmarkExecutorTrue is the harness's own cost per sample: spawning
// /bin/true through the shell (in a fresh memory cgroup when one is
// available), reaping it and reading the peak.
func BenchmarkExecutorTrue(b *testing.B) {
	b.Run("memcg", func(b *testing.B) { benchExecutor(b, memcg.Detect()) })
	b.Run("no-memcg", func(b *testing.B) { benchExecutor(b, nil) })
}

func benchExecutor(b *testing.B, c *memcg.Controller) {
	e := &Executor{Memcg: c, StopGrace: 1, StragglerGrace: 1}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	var wall int64
	for i := 0; i < b.N; i++ {
		m, err := e.Run(context.Background(), []string{"/bin/true"}, nil, os.TempDir(), devnull, devnull)
		if err != nil || m.ExitCode != 0 {
			b.Fatal(m, err)
		}
		wall += int64(m.Wall)
	}
	b.ReportMetric(float64(wall)/float64(b.N)/1e6, "sample-wall-ms")
}
