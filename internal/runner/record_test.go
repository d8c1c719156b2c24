//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"vigil/internal/cgroup"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestRecordExitCodeAndPhaseLog(t *testing.T) {
	testenv.RequireRoot(t)
	b := &fakeBackend{}
	o := fakeOptions(t, b, "sh", "-c", `echo "$VIGIL_RUN_ID $VIGIL_SDK_EVENT_LOG" > "$0"; exit 3`, "")
	envOut := filepath.Join(t.TempDir(), "env")
	o.Argv[3] = envOut
	o.PhaseLogPath = filepath.Join(t.TempDir(), "phases.json")
	res, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Signal != 0 {
		t.Fatalf("exit %d signal %d, want 3/0", res.ExitCode, res.Signal)
	}
	assertNoSession(t, o.RunID)
	if b.closed != 1 || len(b.opened) != 1 || !strings.HasSuffix(b.opened[0], "-"+o.RunID) {
		t.Fatalf("capture opened on %v, closed %d times", b.opened, b.closed)
	}
	env, _ := os.ReadFile(envOut)
	fields := strings.Fields(string(env))
	if len(fields) != 2 || fields[0] != o.RunID {
		t.Fatalf("child saw %q, want run id %s and an SDK log path", env, o.RunID)
	}
	if _, err := os.Stat(fields[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private SDK log %s not removed", fields[1])
	}

	bun := readJSONArchive(t, o.ArchivePath)
	if bun.Run.ExitCode != 3 || bun.Run.RunID != o.RunID || !slices.Equal(bun.Run.Argv, o.Argv) {
		t.Errorf("run.json: %+v", bun.Run)
	}
	if !slices.Contains(bun.Run.EnvNames, wire.EnvRunID) || !slices.IsSorted(bun.Run.EnvNames) {
		t.Errorf("env names %v: want sorted, with %s", bun.Run.EnvNames, wire.EnvRunID)
	}
	for _, kv := range bun.Run.EnvNames {
		if strings.Contains(kv, "=") {
			t.Errorf("env value leaked into run.json: %q", kv)
		}
	}
	if bun.Health.CgroupCorrelation.Status != wire.CorrelationClean {
		t.Errorf("correlation %+v", bun.Health.CgroupCorrelation)
	}

	data, err := os.ReadFile(o.PhaseLogPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("phases", data); err != nil {
		t.Fatalf("phase log does not validate: %v\n%s", err, data)
	}
	pl := res.Phases
	var sum float64
	for _, n := range wire.PhaseNames {
		sum += pl.PhasesMS[n]
	}
	if pl.PhasesMS["child_runtime"] <= 0 || pl.PhasesMS["spawn"] <= 0 || sum > pl.TotalMS {
		t.Errorf("phases %v total %v: want positive spawn/child_runtime, sum <= total", pl.PhasesMS, pl.TotalMS)
	}
	if _, ok := bun.Run.PhasesMS["archive_write"]; ok || len(bun.Run.PhasesMS) != len(wire.PhaseNames)-2 {
		t.Errorf("run.json phases %v: want all but archive_write and teardown, which end after it is written", bun.Run.PhasesMS)
	}
}

func TestRecordSignalExit(t *testing.T) {
	testenv.RequireRoot(t)
	o := fakeOptions(t, &fakeBackend{}, "sh", "-c", "kill -KILL $$")
	res, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 137 || res.Signal != 9 {
		t.Fatalf("exit %d signal %d, want 137/9", res.ExitCode, res.Signal)
	}
	assertNoSession(t, o.RunID)
}

func TestRecordKillsAndCountsStragglers(t *testing.T) {
	testenv.RequireRoot(t)
	// One straggler detached with setsid after a double fork, one that
	// moved itself into a sub-cgroup of the session; the fifo makes the
	// parent exit only after the move.
	mnt, err := cgroup.FindV2Mount()
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	script := `
		mkfifo "$1"
		(setsid sleep 30 &)
		sh -c 'd="$1$(sed -n "s/^0:://p" /proc/self/cgroup)/sub"
			mkdir "$d" && echo $$ > "$d/cgroup.procs" && echo moved > "$2" && exec sleep 30' sub "$0" "$1" &
		read x < "$1"
		exit 0`
	o := fakeOptions(t, &fakeBackend{}, "sh", "-c", script, mnt, fifo)
	o.Grace = 50 * time.Millisecond
	start := time.Now()
	res, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if res.StragglersKilled != 2 {
		t.Fatalf("killed %d stragglers, want 2", res.StragglersKilled)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("vigil waited for the stragglers instead of killing them")
	}
	bun := readJSONArchive(t, o.ArchivePath)
	if bun.Health.CgroupCorrelation.StragglersKilled != 2 {
		t.Errorf("health: %+v", bun.Health.CgroupCorrelation)
	}
	assertNoSession(t, o.RunID)
}

// What the capture lost or read only in part reaches the health document
// and the stderr log; none of it is left to a warning alone.
func TestRecordHealthCarriesKernelLosses(t *testing.T) {
	testenv.RequireRoot(t)
	// Four events lack a part: health counts them from the events
	// themselves, per part.
	events := evidencetest.Kernel(6, 0)
	events[0].Incomplete = []string{wire.IncompleteArgv}
	events[2].Incomplete = []string{wire.IncompleteReadFailed, wire.IncompleteName}
	events[3].Incomplete = []string{wire.IncompletePath}
	events[5].Incomplete = []string{wire.IncompletePath}
	b := &fakeBackend{events: events, result: &CaptureResult{
		Emitted:       evidence.CountKinds(events),
		Drops:         map[wire.Kind]uint64{wire.KindOpen: 3},
		RingFull:      map[wire.Kind]uint64{wire.KindOpen: 1},
		SlotsBusy:     map[wire.Kind]uint64{wire.KindOpen: 2},
		DecodeErrors:  0,
		ProgramMisses: map[string]uint64{"sys_exit": 6},
		DrainProven:   true,
		DrainDetail:   "fake",
	}}
	o := fakeOptions(t, b, "true")
	var log strings.Builder
	o.Log = &log
	res, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	h := readJSONArchive(t, o.ArchivePath).Health
	wantCauses := map[string]uint64{wire.IncompleteArgv: 1, wire.IncompleteReadFailed: 1, wire.IncompleteName: 1, wire.IncompletePath: 2}
	if h.ReadFaults != 4 || !reflect.DeepEqual(h.IncompleteParts, wantCauses) || h.ProgramMisses["sys_exit"] != 6 {
		t.Errorf("read_faults %d %v, program_misses %v", h.ReadFaults, h.IncompleteParts, h.ProgramMisses)
	}
	if c := h.RingbufDrops.Causes; c == nil || c.RingFull[wire.KindOpen] != 1 || c.SlotsBusy[wire.KindOpen] != 2 || h.RingbufDrops.Total != 3 {
		t.Errorf("ringbuf_drops %+v causes %+v", h.RingbufDrops, h.RingbufDrops.Causes)
	}
	if h.KernelLayer.Status != wire.LayerPartial || res.Health.KernelLayer.Status != wire.LayerPartial {
		t.Fatalf("kernel_layer %+v", h.KernelLayer)
	}
	why := strings.Join(h.KernelLayer.Reasons, "; ")
	for _, want := range []string{"ring buffer dropped 3 events (open: 3); causes: ring buffer full 1, record slots busy 2, after the capture closed 0",
		"4 events have a part missing: 1 with a memory read that failed (read_failed); 2 with a path longer than the capture keeps (path_truncated); 1 with a name longer than the capture keeps (name_truncated); 1 with exec arguments longer than the capture keeps (argv_truncated) (an event can lack several)",
		"skipped 6 probe runs (sys_exit: 6)"} {
		if !strings.Contains(why, want) {
			t.Errorf("kernel_layer reasons %q lack %q", why, want)
		}
	}
	if !strings.Contains(log.String(), "kernel_layer partial: 4 events have a part missing") {
		t.Errorf("log lacks the read-fault reason:\n%s", log.String())
	}
}
