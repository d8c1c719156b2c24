//go:build linux

package capture

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// BenchmarkOpenClose measures loading, attaching, detaching and freeing
// one capture (kernel BTF already parsed, as for every Open after the
// first in a process).
func BenchmarkOpenClose(b *testing.B) {
	testenv.RequireRoot(b)
	benchOpenClose(b, Config{CgroupPath: testCgroup(b)})
}

// BenchmarkOpenCloseResident is BenchmarkOpenClose with the programs taken
// from a resident set: load-µs/op is taking the set and starting the
// session (no parsing, no verifier).
func BenchmarkOpenCloseResident(b *testing.B) {
	dir := residentDir(b)
	loadResident(b, dir, 0)
	benchOpenClose(b, Config{CgroupPath: testCgroup(b), Resident: ResidentRequire, ResidentDir: dir})
}

func benchOpenClose(b *testing.B, cfg Config) {
	var load, att, cl float64
	for b.Loop() {
		c, err := Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		load += float64(c.Timings().Load.Microseconds())
		att += float64(c.Timings().Attach.Microseconds())
		t := time.Now()
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		cl += float64(time.Since(t).Microseconds())
	}
	b.ReportMetric(load/float64(b.N), "load-µs/op")
	b.ReportMetric(att/float64(b.N), "attach-µs/op")
	b.ReportMetric(cl/float64(b.N), "close-µs/op")
}

// BenchmarkFirstOpen measures Preflight, Open and Close in a fresh process
// each (ns/op is the whole helper process): the first Open of a process
// also parses the kernel's BTF.
func BenchmarkFirstOpen(b *testing.B) {
	testenv.RequireRoot(b)
	cg := testCgroup(b)
	var sums [5]float64
	for b.Loop() {
		out, err := helper(b, "", "firstopen", cg).Output()
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(out))
		if len(f) != len(sums) {
			b.Fatalf("helper printed %q", out)
		}
		for i := range f {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				b.Fatal(err)
			}
			sums[i] += v
		}
	}
	for i, unit := range []string{"preflight-µs/op", "open-µs/op", "load-µs/op", "attach-µs/op", "close-µs/op"} {
		b.ReportMetric(sums[i]/float64(b.N), unit)
	}
}

// BenchmarkSyscall measures what an open capture costs a task outside its
// session, per syscall the capture does not record (getpid). Rounds
// interleave three states so that load from elsewhere on the host hits
// them alike: no program attached; a sys_exit program that only returns
// (the floor of any syscall tracepoint: the kernel's slow syscall path
// and the program call); and a capture of another cgroup. Each metric is
// the median over rounds, in ns per syscall; added-ns/syscall is the
// median of the per-round differences between capture and none.
func BenchmarkSyscall(b *testing.B) {
	testenv.RequireRoot(b)
	cg := testCgroup(b)
	noop, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: "sys_exit", License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer noop.Close()
	const perRound = 200_000
	rounds := max(b.N/perRound, 5)
	var none, floor, capt, added []float64
	// A helper process loops, so that nothing of this process (the
	// capture's reader, its timers, the collector) runs on the measured
	// thread.
	loop := func() float64 { return helperNs(b, "getpidloop", perRound) }
	b.ResetTimer()
	for r := range rounds {
		// The order of the three states turns every round, so that
		// whatever the previous state left (caches, a collection) falls
		// on each state alike.
		var n, f, k float64
		for i := range 3 {
			switch (r + i) % 3 {
			case 0:
				n = loop()
			case 1:
				l, err := link.AttachTracing(link.TracingOptions{Program: noop})
				if err != nil {
					b.Fatal(err)
				}
				f = loop()
				l.Close()
			case 2:
				k = underCapture(b, cg, loop)
			}
		}
		none, floor, capt, added = append(none, n), append(floor, f), append(capt, k), append(added, k-n)
	}
	b.StopTimer()
	b.ReportMetric(median(none), "none-ns/syscall")
	b.ReportMetric(median(floor), "noop-prog-ns/syscall")
	b.ReportMetric(median(capt), "capture-ns/syscall")
	b.ReportMetric(median(added), "added-ns/syscall")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkIOUringBystander measures what an open capture costs io_uring
// requests of tasks outside the session (the submission and completion
// programs run for every request on the host; each looks the request up
// in ring_inflight): a NOP submitted and reaped at a time, by a helper
// process, without a capture and with a capture of another cgroup,
// alternating. added-ns/request is the median of the per-round
// differences.
func BenchmarkIOUringBystander(b *testing.B) {
	testenv.RequireRoot(b)
	cg := testCgroup(b)
	const perRound = 100_000
	rounds := max(b.N/perRound, 5)
	loop := func() float64 { return helperNs(b, "ringnoploop", perRound) }
	var none, capt, added []float64
	b.ResetTimer()
	for r := range rounds {
		var n, k float64
		for i := range 2 {
			if (r+i)%2 == 0 {
				n = loop()
				continue
			}
			k = underCapture(b, cg, loop)
		}
		none, capt, added = append(none, n), append(capt, k), append(added, k-n)
	}
	b.StopTimer()
	b.ReportMetric(median(none), "none-ns/request")
	b.ReportMetric(median(capt), "capture-ns/request")
	b.ReportMetric(median(added), "added-ns/request")
	b.ReportMetric(0, "ns/op")
}

// underCapture runs measure while a capture of cgroup cg is open.
func underCapture(b *testing.B, cg string, measure func() float64) float64 {
	c, err := Open(Config{CgroupPath: cg})
	if err != nil {
		b.Fatal(err)
	}
	v := measure()
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	return v
}

// helperNs runs helper mode for n operations and returns the ns per
// operation it prints.
func helperNs(b *testing.B, mode string, n int) float64 {
	out, err := helper(b, "", mode, strconv.Itoa(n)).Output()
	if err != nil {
		b.Fatal(err)
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatal(err)
	}
	return ns
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkOpenat measures what one openat+close costs a task, timed by
// the task itself (ns/op is per open, not per benchmark iteration):
// without any capture, with a capture of another cgroup (the cost every
// task on the host pays while vigil records), and inside the captured
// session.
func BenchmarkOpenat(b *testing.B) {
	testenv.RequireRoot(b)
	for _, mode := range []string{"uncaptured", "other-session", "captured"} {
		b.Run(mode, func(b *testing.B) {
			cg := testCgroup(b)
			var c *Capture
			switch mode {
			case "other-session":
				c = openCapture(b, testCgroup(b), 0)
			case "captured":
				c = openCapture(b, cg, 64<<20)
			}
			// Kernel-side run time of the open probes (BPF_ENABLE_STATS
			// is scoped to this descriptor).
			stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
			if err != nil {
				b.Fatal(err)
			}
			defer stats.Close()
			n := b.N
			before := selfCPU(b)
			out, err := helper(b, cg, "openloop", "/etc/hostname", strconv.Itoa(n)).Output()
			readerCPU := selfCPU(b) - before
			if err != nil {
				b.Fatal(err)
			}
			ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ns/float64(n), "ns/op")
			// CPU this process (idle but for the ring reader) spent
			// meanwhile: the user-space share of the capture cost.
			b.ReportMetric(float64(readerCPU)/float64(n), "reader-cpu-ns/op")
			if c != nil {
				var ns, runs uint64
				for _, p := range []*ebpf.Program{c.objs.programs[vigilBPFProgHandleSysExit]} {
					st, err := p.Stats()
					if err != nil {
						b.Fatal(err)
					}
					ns += uint64(st.Runtime.Nanoseconds())
					runs += st.RunCount
				}
				// The probe runs for every syscall on the host; per open
				// of the benchmark task this is the in-kernel cost.
				b.ReportMetric(float64(ns)/float64(n), "bpf-ns/op")
				b.ReportMetric(float64(runs)/float64(n), "bpf-runs/op")
			}
			if mode == "captured" {
				r := finish(b, c, cg)
				if !r.DrainProven {
					b.Fatalf("drain not proven: %s", r.DrainDetail)
				}
				var got int
				for _, ev := range r.Events {
					if ev.Kind == wire.KindOpen && string(ev.Open.Path()) == "/etc/hostname" {
						got++
					}
				}
				if uint64(got)+r.Drops[wire.KindOpen] < uint64(n) {
					b.Fatalf("captured %d + dropped %d of %d opens", got, r.Drops[wire.KindOpen], n)
				}
				b.ReportMetric(float64(r.Drops[wire.KindOpen]), "drops")
			}
		})
	}
}

// selfCPU is this process's user+system CPU time in nanoseconds.
func selfCPU(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkDecode decodes typical open records (a path of three components
// and the requested name) into reused blocks passed on to a sink, as the
// ring reader does for a recording.
// The ring read itself needs the kernel side: BenchmarkOpenat/captured
// reports the reader's CPU per event (reader-cpu-ns/op), decode included.
func BenchmarkDecode(b *testing.B) {
	body := structBytes(vigilBPFVigilSys{Ret: 3, Nr: 257, Op: 1, Args: [6]uint64{uint64(0xffffff9c), 0, 0o101, 0o644}, Ino: 5, Dev: 6, F_mode: 2})
	raw := rec{hdr: vigilBPFVigilHdr{Kind: uint8(vigilBPFVigilKindVIGIL_KIND_OPEN), Hook: uint8(vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT),
		Flags: strSet(0) | strSet(1)}, body: body, strs: []string{"hostname\x00etc\x00work\x00", "/work/etc/hostname"}}.bytes()
	// Records arrive 8-byte aligned.
	buf := make([]uint64, (len(raw)+7)/8)
	rec := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(raw))
	copy(rec, raw)
	s := newReaderState(DefaultRingSize, func([]wire.Kernel) {}, 0)
	seqAt := int(unsafe.Offsetof(vigilBPFVigilHdr{}.Seq))
	var seq uint64
	b.ReportAllocs()
	for b.Loop() {
		binary.NativeEndian.PutUint64(rec[seqAt:], seq)
		seq++
		s.handle(rec)
	}
	s.end()
	if s.decodeErrors != 0 || s.order.late != 0 {
		b.Fatalf("decode: %v", s.firstDecode)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRecordStages shows where the kernel-side cost of recording one
// open goes. A task in the session opens and closes a file; the capture
// stops each recorded syscall at one stage (enum vigil_stage), so the
// difference between two stages is what the later one adds:
//
//	tracked   the sys_exit tracepoint for both calls, the syscall table
//	          lookup, and for the open the tracked-task lookup
//	begin     reading the syscall's arguments, taking a scratch slot and
//	          filling the header (time, ids, cgroup, comm)
//	body      the record's body: the descriptor's file, its path walked
//	          from dentry and mount, the name passed by pointer
//	reserve   reserving the record's ring space (and discarding it)
//	all       writing the record to the ring, numbering, submitting it
//
// all-1MiB-ring is all with a ring of 1 MiB instead of the default: on
// some hosts a record's reservation costs more the larger the ring it
// cycles through (its memory was written less recently).
//
// The file is opened at two depths, so that the walk's cost per path
// component is the body's difference divided by the components added.
// Rounds interleave the cells; each <cell>-ns/open is the median over
// rounds of the probes' run time (BPF_ENABLE_STATS) per open, and each
// add-* the median of the per-round differences, in ns. The run time is
// that of every syscall on the host while the capture is open (the
// helper's start and anything else running included): the differences
// cancel that, the absolute figures carry it. A cell with any drop
// fails the benchmark: a dropped record skips the stages it is to show.
func BenchmarkRecordStages(b *testing.B) {
	testenv.RequireRoot(b)
	const deeper = 8 // components the deep path adds
	dir := b.TempDir()
	shallow := filepath.Join(dir, "f")
	deepDir := dir
	for i := range deeper {
		deepDir = filepath.Join(deepDir, string(rune('a'+i)))
	}
	if err := os.MkdirAll(deepDir, 0o755); err != nil {
		b.Fatal(err)
	}
	deep := filepath.Join(deepDir, "f")
	for _, p := range []string{shallow, deep} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	type cell struct {
		name  string
		stage vigilBPFVigilStage
		path  string
		ring  int
	}
	cells := []cell{
		{"tracked", vigilBPFVigilStageVIGIL_STAGE_TRACKED, shallow, 0},
		{"begin", vigilBPFVigilStageVIGIL_STAGE_BEGIN, shallow, 0},
		{"body", vigilBPFVigilStageVIGIL_STAGE_BODY, shallow, 0},
		{"body-deep", vigilBPFVigilStageVIGIL_STAGE_BODY, deep, 0},
		{"reserve", vigilBPFVigilStageVIGIL_STAGE_RESERVE, shallow, 0},
		{"all", vigilBPFVigilStageVIGIL_STAGE_ALL, shallow, 0},
		{"all-1MiB-ring", vigilBPFVigilStageVIGIL_STAGE_ALL, shallow, 1 << 20},
	}
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	const perRound = 50_000
	rounds := max(b.N/perRound, 3)
	samples := make(map[string][]float64)
	run := func(c cell) float64 {
		cg := testCgroup(b)
		capt, err := Open(Config{CgroupPath: cg, stopStage: c.stage, RingSize: c.ring})
		if err != nil {
			b.Fatal(err)
		}
		defer capt.Close()
		if err := helper(b, cg, "openloop", c.path, strconv.Itoa(perRound)).Run(); err != nil {
			b.Fatal(err)
		}
		st, err := capt.objs.programs[vigilBPFProgHandleSysExit].Stats()
		if err != nil {
			b.Fatal(err)
		}
		r := finish(b, capt, cg)
		if n := wire.Total(r.Drops); n != 0 {
			b.Fatalf("%s: %d records dropped (%v); rerun on a quieter host", c.name, n, r.Drops)
		}
		if c.stage == vigilBPFVigilStageVIGIL_STAGE_ALL {
			var got int
			for _, ev := range r.Events {
				if ev.Kind == wire.KindOpen && string(ev.Open.Path()) == c.path {
					got++
				}
			}
			if got != perRound {
				b.Fatalf("%s: recorded %d of %d opens", c.name, got, perRound)
			}
		}
		return float64(st.Runtime.Nanoseconds()) / perRound
	}
	b.ResetTimer()
	for r := range rounds {
		for i := range cells {
			c := cells[(r+i)%len(cells)]
			samples[c.name] = append(samples[c.name], run(c))
		}
	}
	b.StopTimer()
	for _, c := range cells {
		b.ReportMetric(median(samples[c.name]), c.name+"-ns/open")
	}
	// What a stage adds: the median of its per-round differences from
	// the stage before it (the rounds pair them: measured side by side).
	added := func(later, earlier string) float64 {
		d := make([]float64, rounds)
		for r := range d {
			d[r] = samples[later][r] - samples[earlier][r]
		}
		return median(d)
	}
	b.ReportMetric(added("begin", "tracked"), "add-begin-ns")
	b.ReportMetric(added("body", "begin"), "add-body-ns")
	b.ReportMetric(added("reserve", "body"), "add-reserve-ns")
	b.ReportMetric(added("all", "reserve"), "add-write-submit-ns")
	b.ReportMetric(added("all", "all-1MiB-ring"), "default-over-1MiB-ring-ns")
	b.ReportMetric(added("body-deep", "body")/deeper, "walk-ns/component")
	b.ReportMetric(0, "ns/op")
}
