//go:build linux

package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"vigil/internal/archive"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// timeRun runs cmd to completion and returns its wall time.
func timeRun(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	t := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	return time.Since(t)
}

// pairResult is the mean wall time of bare and recorded runs, and the
// number of kernel events in the last archive.
type pairResult struct {
	bare, rec time.Duration
	events    int
}

// runPair alternates a bare run of argv with a recorded one (so drifting
// machine load hits both alike), n times.
func runPair(b *testing.B, n int, argv, env []string) pairResult {
	arc := filepath.Join(b.TempDir(), "a.tar.gz")
	var p pairResult
	for i := 0; i < n; i++ {
		c := exec.Command(argv[0], argv[1:]...)
		c.Env = env
		p.bare += timeRun(b, c)
		c = exec.Command(testenv.Vigil(b), append([]string{"record", "-q", "--archive", arc, "--"}, argv...)...)
		c.Env = env
		p.rec += timeRun(b, c)
	}
	p.bare /= time.Duration(n)
	p.rec /= time.Duration(n)
	bun, err := archive.Read(arc)
	if err != nil {
		b.Fatal(err)
	}
	if h := bun.Health; h.KernelLayer.Status != "complete" || h.RingbufDrops.Total != 0 {
		b.Fatalf("health %+v drops %d", h.KernelLayer, h.RingbufDrops.Total)
	}
	p.events = len(bun.Kernel)
	return p
}

func (p pairResult) report(b *testing.B) {
	b.ReportMetric(float64(p.bare)/1e6, "bare-ms/op")
	b.ReportMetric(float64(p.rec)/1e6, "record-ms/op")
	b.ReportMetric(float64(p.rec-p.bare)/1e6, "added-ms/op")
	b.ReportMetric(float64(p.events), "events/op")
}

// BenchmarkRecordTrue is the fixed cost of recording a process that does
// nothing.
func BenchmarkRecordTrue(b *testing.B) {
	testenv.RequireRoot(b)
	runPair(b, b.N, []string{"/bin/true"}, os.Environ()).report(b)
}

// BenchmarkRecordFiles10k writes and reads back 10,000 files with 4
// workers (20,000 opens) in a tmpfs directory.
func BenchmarkRecordFiles10k(b *testing.B) {
	dir, err := os.MkdirTemp("/dev/shm", "vigil-bench-")
	if err != nil {
		b.Skip("no /dev/shm:", err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	testenv.RequireRoot(b)
	env := append(os.Environ(), testenv.HelperEnv("files"))
	files := func(n int) []string { return []string{self, strconv.Itoa(n), "4", dir} }
	// The same program writing no files gives the fixed cost; the
	// difference is what the 20,000 opens added.
	full := runPair(b, b.N, files(10000), env)
	empty := runPair(b, b.N, files(0), env)
	full.report(b)
	perEvent := float64((full.rec-full.bare)-(empty.rec-empty.bare)) / float64(full.events-empty.events)
	b.ReportMetric(float64(empty.rec-empty.bare)/1e6, "fixed-ms/op")
	b.ReportMetric(perEvent, "marginal-ns/event")
}

// BenchmarkRecordNoCapture is the runner's own cost without kernel
// capture: preflight, stale scan, session create/remove, clone3 into the
// cgroup, waits and archive write, in process.
func BenchmarkRecordNoCapture(b *testing.B) {
	testenv.RequireRoot(b)
	dir := b.TempDir()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	var bare time.Duration
	var phases = map[string]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(t)
		res, err := Record(context.Background(), Options{
			Argv: []string{"/bin/true"}, ArchivePath: filepath.Join(dir, "a.tar.gz"),
			Backend: &fakeBackend{}, Stdin: null, Stdout: null, Stderr: null,
		})
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range res.Phases.PhasesMS {
			phases[k] += v
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(bare)/n/1e6, "bare-ms/op")
	for _, k := range wire.PhaseNames {
		b.ReportMetric(phases[k]/n, k+"-ms/op")
	}
}
