package evidence_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func TestBuildHealth(t *testing.T) {
	counts := map[wire.Kind]uint64{wire.KindExec: 1, wire.KindOpen: 10}
	base := func() evidence.HealthInput {
		in := evidencetest.CleanInput()
		in.Counts = counts
		return in
	}
	cases := []struct {
		name        string
		mod         func(*evidence.HealthInput)
		kernel      wire.LayerStatus
		kernelWhy   []string // substrings, one per reason, in order
		corr        wire.CorrelationStatus
		corrWhy     []string
		sdk         wire.SDKStatus
		sdkProblems int
	}{
		{name: "clean", mod: func(*evidence.HealthInput) {},
			kernel: "complete", corr: "clean", sdk: "absent"},
		{name: "capture unavailable", mod: func(in *evidence.HealthInput) {
			in.CaptureAvailable, in.AbsentReason, in.Probes = false, "no BTF", nil
			// Counters that would make an available layer partial do not
			// matter once capture is absent.
			in.DrainProven = false
		}, kernel: "absent", kernelWhy: []string{"kernel capture unavailable: no BTF"}, corr: "clean", sdk: "absent"},
		{name: "no probes", mod: func(in *evidence.HealthInput) { in.Probes = nil },
			kernel: "partial", kernelWhy: []string{"no probes reported"}, corr: "clean", sdk: "absent"},
		{name: "required probe missing", mod: func(in *evidence.HealthInput) {
			in.Probes[3].Attached, in.Probes[3].Error = false, "EPERM"
		}, kernel: "partial", kernelWhy: []string{"required probe tp_btf/sys_exit did not attach: EPERM"}, corr: "clean", sdk: "absent"},
		{name: "optional probe missing is still complete", mod: func(in *evidence.HealthInput) {
			in.Probes = append(in.Probes, wire.Probe{Name: "kprobe/extra", Attached: false, Required: false, Error: "ENOENT"})
		}, kernel: "complete", corr: "clean", sdk: "absent"},
		{name: "drops", mod: func(in *evidence.HealthInput) {
			in.Drops = map[wire.Kind]uint64{wire.KindOpen: 3, wire.KindExec: 1}
		}, kernel: "partial", kernelWhy: []string{"ring buffer dropped 4 events (exec: 1, open: 3)"}, corr: "clean", sdk: "absent"},
		{name: "drops split by cause", mod: func(in *evidence.HealthInput) {
			in.Drops = map[wire.Kind]uint64{wire.KindOpen: 3, wire.KindExec: 1}
			in.RingFull = map[wire.Kind]uint64{wire.KindOpen: 3}
			in.SlotsBusy = map[wire.Kind]uint64{wire.KindExec: 1}
		}, kernel: "partial", kernelWhy: []string{"ring buffer dropped 4 events (exec: 1, open: 3); causes: ring buffer full 3, record slots busy 1, after the capture closed 0"}, corr: "clean", sdk: "absent"},
		{name: "drop causes that do not add up", mod: func(in *evidence.HealthInput) {
			in.Drops = map[wire.Kind]uint64{wire.KindOpen: 3}
			in.RingFull = map[wire.Kind]uint64{wire.KindOpen: 1}
			in.AfterClose = map[wire.Kind]uint64{wire.KindConnect: 1}
		}, kernel: "partial", kernelWhy: []string{"ring buffer dropped 3 events", "drop causes do not add up to the drops: open: 1 + 0 + 0 != 3, connect: 0 + 0 + 1 != 0"}, corr: "clean", sdk: "absent"},
		{name: "drop causes all zero with no drops", mod: func(in *evidence.HealthInput) {
			in.RingFull, in.SlotsBusy, in.AfterClose = map[wire.Kind]uint64{}, map[wire.Kind]uint64{}, map[wire.Kind]uint64{}
		}, kernel: "complete", corr: "clean", sdk: "absent"},
		{name: "read faults", mod: func(in *evidence.HealthInput) { in.ReadFaults = 2 },
			kernel: "partial", kernelWhy: []string{"2 events have a part missing"}, corr: "clean", sdk: "absent"},
		{name: "compat syscalls", mod: func(in *evidence.HealthInput) { in.Compat = map[wire.Kind]uint64{wire.KindOpen: 2} },
			kernel: "partial", kernelWhy: []string{"2 32-bit (compat) syscalls of the run were counted but not decoded (open: 2)"}, corr: "clean", sdk: "absent"},
		{name: "untracked tasks", mod: func(in *evidence.HealthInput) { in.Untracked = 1 },
			kernel: "partial", kernelWhy: []string{"1 new task(s) of the run could not be marked"}, corr: "clean", sdk: "absent"},
		{name: "io_uring completions not traced", mod: func(in *evidence.HealthInput) { in.IOUringUntraced = 3 },
			kernel: "partial", kernelWhy: []string{"3 io_uring request(s) of the run were submitted with IOSQE_CQE_SKIP_SUCCESS, completed past a full CQ ring, completed by a task not the run's"}, corr: "clean", sdk: "absent"},
		{name: "covered class not attached", mod: func(in *evidence.HealthInput) {
			in.Coverage.Covered[0].Attached = false
		}, kernel: "partial", kernelWhy: []string{"covered class exec has no attached hook (tp_btf/sched_process_exec)"}, corr: "clean", sdk: "absent"},
		{name: "task moved out and back", mod: func(in *evidence.HealthInput) { in.SessionTasks.MovedOut = 1 },
			kernel: "partial", kernelWhy: []string{"cgroup correlation partial"},
			corr: "partial", corrWhy: []string{"1 move(s) of tasks of the run out of the session cgroup: they stayed captured"}, sdk: "absent"},
		{name: "task joined", mod: func(in *evidence.HealthInput) { in.SessionTasks.Joined = 2 },
			kernel: "partial", kernelWhy: []string{"cgroup correlation partial"},
			corr: "partial", corrWhy: []string{"2 task(s) joined the session cgroup from outside"}, sdk: "absent"},
		{name: "program misses", mod: func(in *evidence.HealthInput) {
			in.ProgramMisses = map[string]uint64{"sys_exit": 3, "sched_process_exec": 0, "sched_process_fork": 2}
		}, kernel: "partial", kernelWhy: []string{"the kernel skipped 5 probe runs (sched_process_fork: 2, sys_exit: 3) because another BPF program was running on the CPU; they may or may not concern the session"}, corr: "clean", sdk: "absent"},
		{name: "program misses all zero is still complete", mod: func(in *evidence.HealthInput) {
			in.ProgramMisses = map[string]uint64{"sys_exit": 0}
		}, kernel: "complete", corr: "clean", sdk: "absent"},
		{name: "decode error with detail", mod: func(in *evidence.HealthInput) {
			in.DecodeErrors, in.DecodeDetail = 1, "short record\n (12 bytes)"
		}, kernel: "partial", kernelWhy: []string{"1 ring buffer records failed to decode (first: short record (12 bytes))"}, corr: "clean", sdk: "absent"},
		{name: "read faults and misses with capture absent", mod: func(in *evidence.HealthInput) {
			in.CaptureAvailable, in.AbsentReason, in.Probes = false, "no BTF", nil
			in.ReadFaults, in.ProgramMisses = 1, map[string]uint64{"sys_exit": 1}
		}, kernel: "absent", kernelWhy: []string{"kernel capture unavailable: no BTF"}, corr: "clean", sdk: "absent"},
		{name: "decode errors", mod: func(in *evidence.HealthInput) { in.DecodeErrors = 2 },
			kernel: "partial", kernelWhy: []string{"2 ring buffer records failed to decode"}, corr: "clean", sdk: "absent"},
		{name: "seq gaps", mod: func(in *evidence.HealthInput) { in.SeqGaps = 5 },
			kernel: "partial", kernelWhy: []string{"5 sequence numbers missing"}, corr: "clean", sdk: "absent"},
		{name: "emitted accounted for", mod: func(in *evidence.HealthInput) {
			in.Emitted = map[wire.Kind]uint64{wire.KindExec: 1, wire.KindOpen: 12}
			in.DecodeErrors = 2
		}, kernel: "partial", kernelWhy: []string{"2 ring buffer records failed to decode"}, corr: "clean", sdk: "absent"},
		{name: "emitted but missing", mod: func(in *evidence.HealthInput) {
			in.Emitted = map[wire.Kind]uint64{wire.KindExec: 1, wire.KindOpen: 15}
		}, kernel: "partial", kernelWhy: []string{"kernel emitted 16 events but the archive holds 11 and 0 failed to decode"}, corr: "clean", sdk: "absent"},
		{name: "drain not proven", mod: func(in *evidence.HealthInput) { in.DrainProven, in.DrainDetail = false, "timed out" },
			kernel: "partial", kernelWhy: []string{"ring buffer drain not proven empty: timed out"}, corr: "clean", sdk: "absent"},
		{name: "child not placed before exec", mod: func(in *evidence.HealthInput) { in.ChildPlacedBeforeExec = false },
			kernel: "partial", kernelWhy: []string{"cgroup correlation failed"},
			corr: "failed", corrWhy: []string{"child was not placed in the session cgroup before exec"}, sdk: "absent"},
		{name: "some outside events", mod: func(in *evidence.HealthInput) { in.OutsideEvents = 3 },
			kernel: "partial", kernelWhy: []string{"cgroup correlation partial"},
			corr: "partial", corrWhy: []string{"3 of 11 events came from outside the session cgroup"}, sdk: "absent"},
		{name: "all outside events", mod: func(in *evidence.HealthInput) { in.OutsideEvents = 11 },
			kernel: "partial", kernelWhy: []string{"cgroup correlation failed"},
			corr: "failed", corrWhy: []string{"all 11 events came from outside the session cgroup"}, sdk: "absent"},
		{name: "stragglers killed", mod: func(in *evidence.HealthInput) { in.StragglersKilled = 2 },
			kernel: "partial", kernelWhy: []string{"cgroup correlation partial"},
			corr: "partial", corrWhy: []string{"2 straggler process(es) killed"}, sdk: "absent"},
		{name: "sdk complete", mod: func(in *evidence.HealthInput) { in.SDKPresent, in.SDKEvents = true, 7 },
			kernel: "complete", corr: "clean", sdk: "complete"},
		{name: "sdk empty log is absent", mod: func(in *evidence.HealthInput) { in.SDKPresent = true },
			kernel: "complete", corr: "clean", sdk: "absent"},
		{name: "sdk invalid", mod: func(in *evidence.HealthInput) {
			in.SDKPresent, in.SDKEvents, in.SDKProblems = true, 3, []string{"line 2: seq 5, want 1", "line 4: empty line"}
		}, kernel: "complete", corr: "clean", sdk: "invalid", sdkProblems: 2},
		{name: "everything wrong, reasons in order", mod: func(in *evidence.HealthInput) {
			in.Probes[0].Attached = false
			in.Drops = map[wire.Kind]uint64{wire.KindFork: 1}
			in.DecodeErrors, in.DrainProven, in.StragglersKilled, in.ChildPlacedBeforeExec = 1, false, 1, false
			in.ReadFaults, in.ProgramMisses = 4, map[string]uint64{"sys_exit": 1}
		}, kernel: "partial", kernelWhy: []string{"required probe tp_btf/sched_process_exec", "dropped 1 events (fork: 1)", "1 ring buffer records failed", "4 events have a part missing", "skipped 1 probe runs (sys_exit: 1)", "drain not proven", "cgroup correlation failed"},
			corr: "failed", corrWhy: []string{"not placed", "1 straggler"}, sdk: "absent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base()
			c.mod(&in)
			h := evidence.BuildHealth("r1", in)
			if h.KernelLayer.Status != c.kernel {
				t.Errorf("kernel_layer = %q (%v), want %q", h.KernelLayer.Status, h.KernelLayer.Reasons, c.kernel)
			}
			matchReasons(t, "kernel_layer", h.KernelLayer.Reasons, c.kernelWhy)
			if h.CgroupCorrelation.Status != c.corr {
				t.Errorf("cgroup_correlation = %q, want %q", h.CgroupCorrelation.Status, c.corr)
			}
			matchReasons(t, "cgroup_correlation", h.CgroupCorrelation.Reasons, c.corrWhy)
			if h.SDKLayer.Status != c.sdk || len(h.SDKLayer.Problems) != c.sdkProblems {
				t.Errorf("sdk_layer = %q with %d problems, want %q with %d", h.SDKLayer.Status, len(h.SDKLayer.Problems), c.sdk, c.sdkProblems)
			}
			var total uint64
			for _, n := range in.Drops {
				total += n
			}
			if h.RingbufDrops.Total != total {
				t.Errorf("ringbuf_drops.total = %d, want %d", h.RingbufDrops.Total, total)
			}
			data, _ := json.Marshal(h)
			if err := wire.Validate("observation-health", data); err != nil {
				t.Errorf("schema: %v\n%s", err, data)
			}
			// The document records its inputs: rebuilding from them gives
			// the same document, which is what verify relies on.
			again := evidence.BuildHealth("r1", evidence.InputOf(h))
			a, _ := json.Marshal(again)
			if string(a) != string(data) {
				t.Errorf("BuildHealth(InputOf(h)) != h:\n%s\n%s", a, data)
			}
		})
	}
}

func matchReasons(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s reasons = %q, want %d reasons matching %q", what, got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s reason %d = %q, want it to contain %q", what, i, got[i], want[i])
		}
		if strings.Contains(got[i], "\n") {
			t.Errorf("%s reason %d spans lines: %q", what, i, got[i])
		}
	}
}

func TestBuildHealthIsOrderIndependent(t *testing.T) {
	a := evidencetest.CleanInput()
	b := evidencetest.CleanInput()
	for i, j := 0, len(b.Probes)-1; i < j; i, j = i+1, j-1 {
		b.Probes[i], b.Probes[j] = b.Probes[j], b.Probes[i]
	}
	a.Drops = map[wire.Kind]uint64{}
	b.Drops = map[wire.Kind]uint64{}
	for _, k := range wire.Kinds {
		a.Drops[k] = 1
	}
	for i := len(wire.Kinds) - 1; i >= 0; i-- {
		b.Drops[wire.Kinds[i]] = 1
	}
	ha, hb := evidence.BuildHealth("r", a), evidence.BuildHealth("r", b)
	if !reflect.DeepEqual(ha, hb) {
		t.Fatalf("probe or map order changed the document:\n%+v\n%+v", ha, hb)
	}
	if ha.Probes[0].Name > ha.Probes[1].Name {
		t.Fatalf("probes not sorted by name: %v", ha.Probes)
	}
}

// The document keeps what the verdict condenses: drops per kind and per
// cause, read faults, and skipped probe runs per probe.
func TestBuildHealthKeepsBreakdowns(t *testing.T) {
	in := evidencetest.CleanInput()
	in.Drops = map[wire.Kind]uint64{wire.KindOpen: 5, wire.KindConnect: 1}
	in.RingFull = map[wire.Kind]uint64{wire.KindOpen: 2}
	in.SlotsBusy = map[wire.Kind]uint64{wire.KindOpen: 3, wire.KindConnect: 1}
	in.ReadFaults = 7
	in.ProgramMisses = map[string]uint64{"sys_exit": 9}
	h := evidence.BuildHealth("r", in)
	c := h.RingbufDrops.Causes
	if c == nil {
		t.Fatal("ringbuf_drops.causes missing")
	}
	if h.RingbufDrops.PerKind[wire.KindOpen] != 5 || c.RingFull[wire.KindOpen] != 2 || c.SlotsBusy[wire.KindOpen] != 3 || c.SlotsBusy[wire.KindConnect] != 1 {
		t.Errorf("breakdown lost: per_kind %v, ring_full %v, slots_busy %v", h.RingbufDrops.PerKind, c.RingFull, c.SlotsBusy)
	}
	if h.ReadFaults != 7 || h.ProgramMisses["sys_exit"] != 9 {
		t.Errorf("read_faults %d, program_misses %v", h.ReadFaults, h.ProgramMisses)
	}
	// Inputs are copied, not aliased.
	in.ProgramMisses["sys_exit"] = 0
	if h.ProgramMisses["sys_exit"] != 9 {
		t.Error("program_misses aliases the input map")
	}
	// Without a split, no causes are claimed; without misses, the
	// document still says zero.
	h = evidence.BuildHealth("r", evidencetest.CleanInput())
	if h.RingbufDrops.Causes != nil || h.ProgramMisses == nil {
		t.Errorf("causes %v, program_misses %v", h.RingbufDrops.Causes, h.ProgramMisses)
	}
	data, _ := json.Marshal(h)
	if !strings.Contains(string(data), `"read_faults":0,"compat_syscalls":{`) || strings.Contains(string(data), "causes") {
		t.Errorf("document: %s", data)
	}
}
