//go:build linux

package runner

import (
	"os"
	"strconv"
	"strings"
	"time"

	"vigil/internal/wire"
)

// phaseClock times consecutive phases on the monotonic clock.
type phaseClock struct {
	start time.Time
	ms    map[string]float64

	holdPhase, holdFIFO string // see HoldPhaseEnv
}

func newPhaseClock() *phaseClock {
	return &phaseClock{start: time.Now(), ms: make(map[string]float64, len(wire.PhaseNames)),
		holdPhase: os.Getenv(HoldPhaseEnv), holdFIFO: os.Getenv(HoldFIFOEnv)}
}

// HoldPhaseEnv and HoldFIFOEnv stop a run at the start of a phase, so that
// a test can act (send a signal, say) in exactly that phase: with both
// set, vigil writes the phase name to the FIFO and waits to read a byte
// from it before going on. Unset, they cost nothing.
const (
	HoldPhaseEnv = "VIGIL_HOLD_PHASE"
	HoldFIFOEnv  = "VIGIL_HOLD_FIFO"
)

// hold is the stop HoldPhaseEnv asks for; errors let the run go on.
func (p *phaseClock) hold(name string) {
	if p.holdFIFO == "" || p.holdPhase != name {
		return
	}
	if err := os.WriteFile(p.holdFIFO, []byte(name), 0); err != nil {
		return
	}
	f, err := os.Open(p.holdFIFO)
	if err != nil {
		return
	}
	defer f.Close()
	f.Read(make([]byte, 1))
}

// begin returns a function that, when called, adds the time since begin to
// phase name.
func (p *phaseClock) begin(name string) func() {
	p.hold(name)
	t := time.Now()
	return func() { p.ms[name] += ms(time.Since(t)) }
}

// snapshot returns every phase (zero for those that did not run).
func (p *phaseClock) snapshot() map[string]float64 {
	out := make(map[string]float64, len(wire.PhaseNames))
	for _, n := range wire.PhaseNames {
		out[n] = p.ms[n]
	}
	return out
}

func (p *phaseClock) total() float64 { return ms(time.Since(p.start)) }

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// ownPeakRSSKiB is the peak resident memory of this process's own image:
// VmHWM, the high-water mark of its address space. Not getrusage's
// ru_maxrss: that also holds the peak of the image exec replaced, which
// for a vigil started by vfork (Go's os/exec, posix_spawn) is its
// parent's whole address space. 0 when /proc cannot tell.
func ownPeakRSSKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return n
		}
	}
	return 0
}
