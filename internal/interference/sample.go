package interference

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"vigil/internal/wire"
)

// userHZ is the unit of /proc/stat: fixed at 100 by the kernel ABI on
// every architecture vigil builds for.
const userHZ = 100

// Snapshot is the host's cumulative counters at one instant.
type Snapshot struct {
	At time.Time
	// BusyTicks is CPU time not idle or waiting on I/O, summed over CPUs,
	// in 1/userHZ s; -1 when /proc/stat is unreadable.
	BusyTicks int64
	// CPUs is the number of per-CPU lines in /proc/stat.
	CPUs int
	// PressureUS is the "some" stall total (µs) of /proc/pressure/NAME for
	// cpu, io and memory; a missing resource is absent.
	PressureUS map[string]int64
	// Load1 is the one-minute load average; -1 when unreadable.
	Load1 float64
	// why holds the reasons figures are missing.
	why []string
}

// Take reads the host counters now; At is stamped after the reads.
func Take() Snapshot {
	s := Snapshot{BusyTicks: -1, Load1: -1, PressureUS: map[string]int64{}}
	if data, err := os.ReadFile(filepath.Join(procRoot, "stat")); err == nil {
		if v, ok := parseBusy(string(data)); ok {
			s.BusyTicks = v
			s.CPUs = countCPUs(string(data))
		} else {
			s.why = append(s.why, "foreign_cpus: /proc/stat has no cpu line")
		}
	} else {
		s.why = append(s.why, "foreign_cpus: "+err.Error())
	}
	for _, res := range []string{"cpu", "io", "memory"} {
		data, err := os.ReadFile(filepath.Join(procRoot, "pressure", res))
		if err != nil {
			s.why = append(s.why, res+"_pressure: "+err.Error()+" (kernel without PSI, or psi=0)")
			continue
		}
		if v, ok := parseSomeTotal(string(data)); ok {
			s.PressureUS[res] = v
		}
	}
	if data, err := os.ReadFile(filepath.Join(procRoot, "loadavg")); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				s.Load1 = v
			}
		}
	}
	// Stamped after the reads: a sample's wall time starts here, and
	// reading /proc must not be counted in it.
	s.At = time.Now()
	return s
}

// parseBusy sums the aggregate "cpu" line of /proc/stat without idle and
// iowait (guest time is already inside user and nice).
func parseBusy(stat string) (int64, bool) {
	for _, line := range strings.Split(stat, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "cpu" {
			continue
		}
		var busy int64
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		for i, v := range f[1:9:9] {
			if i == 3 || i == 4 {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, false
			}
			busy += n
		}
		return busy, true
	}
	return 0, false
}

// countCPUs counts the per-CPU lines (cpu0, cpu1, ...) of /proc/stat.
func countCPUs(stat string) int {
	n := 0
	for _, line := range strings.Split(stat, "\n") {
		if len(line) > 3 && strings.HasPrefix(line, "cpu") && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// parseSomeTotal reads total= (µs) of the "some" line of a PSI file.
func parseSomeTotal(psi string) (int64, bool) {
	v, ok := psiSome(psi, "total")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// psiSome returns the value of key on the "some" line of a PSI file.
func psiSome(psi, key string) (string, bool) {
	for _, line := range strings.Split(psi, "\n") {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, key+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// Tree is what the sample's own process tree used (from wait4's rusage).
type Tree struct {
	CPU                  time.Duration // user + system
	Voluntary, Preempted int64         // context switches
}

// Measure is the interference during a sample that ran from a to b.
func Measure(a, b Snapshot, tree Tree) wire.Interference {
	wall := b.At.Sub(a.At)
	in := wire.Interference{Unavailable: append(append([]string{}, a.why...), b.why...)}
	in.VoluntaryCtxSwitches = &tree.Voluntary
	in.InvoluntaryCtxSwitches = &tree.Preempted
	// Migrations of a whole tree need a perf counter inherited by every
	// descendant; rusage does not have them.
	in.Unavailable = append(in.Unavailable, "cpu_migrations: not counted (rusage has no migrations; a perf counter would be needed)")
	if a.Load1 >= 0 {
		l := a.Load1
		in.Load1AtStart = &l
	}
	if wall <= 0 {
		in.Unavailable = append(in.Unavailable, "foreign_cpus and pressure: the sample took no measurable time")
		return in
	}
	if a.BusyTicks >= 0 && b.BusyTicks >= 0 {
		busy := time.Duration(b.BusyTicks-a.BusyTicks) * (time.Second / userHZ)
		// The tick counters round to 10 ms, the tree's CPU does not: a
		// tiny negative difference is rounding, not negative load.
		f := max(float64(busy-tree.CPU)/float64(wall), 0)
		in.ForeignCPUs = &f
		// Each CPU's count may be one tick off at either end of the
		// interval: the figure is good to about CPUs ticks per wall.
		res := float64(max(b.CPUs, 1)) * float64(time.Second/userHZ) / float64(wall)
		in.ForeignCPUsResolution = &res
	}
	shares := map[string]**float64{"cpu": &in.CPUPressureSome, "io": &in.IOPressureSome, "memory": &in.MemoryPressureSome}
	for res, dst := range shares {
		x, okA := a.PressureUS[res]
		y, okB := b.PressureUS[res]
		if okA && okB {
			v := float64(y-x) / float64(wall.Microseconds())
			*dst = &v
		}
	}
	return in
}

// DefaultMaxForeignCPUs is the interference gate's default. Measured on a
// quiet 2-core host (vigil bench --quick, 85 samples): median 0.05 CPUs
// busy outside a sample, 90th percentile 0.27, maximum 0.55 (a 40 ms
// sample, where 10 ms ticks alone make the figure uncertain by 0.5). With
// one CPU-bound process beside the run: 0.9-1.3. The gate compares the
// figure net of its resolution, so 0.5 separates the two.
const DefaultMaxForeignCPUs = 0.5

// Contended reports whether a sample's interference passes maxForeign
// (average CPUs busy outside the sample); false when the gate is off (0)
// or the host could not tell.
//
// The figure is compared net of its resolution (see ForeignCPUsResolution):
// a short sample is called contended only when the tick counts leave no
// doubt, never because of their rounding.
func Contended(in *wire.Interference, maxForeign float64) bool {
	return maxForeign > 0 && Over(in, maxForeign)
}

// Over reports whether the foreign load of in, net of its resolution,
// exceeds limit.
func Over(in *wire.Interference, limit float64) bool {
	if in == nil || in.ForeignCPUs == nil {
		return false
	}
	res := 0.0
	if in.ForeignCPUsResolution != nil {
		res = *in.ForeignCPUsResolution
	}
	return *in.ForeignCPUs-res > limit
}

// Reason is the discard reason of a contended sample; it names the gate,
// not the figure, so that the samples it discarded count under one reason
// (the figures are in each sample's interference record).
func Reason(maxForeign float64) string {
	return fmt.Sprintf("contended: more than %.2f CPUs busy outside the sample on average", maxForeign)
}
