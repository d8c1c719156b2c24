package runner

import "time"

// phaseClock times consecutive phases on the monotonic clock.
type phaseClock struct {
	start time.Time
	ms    map[string]float64
}

func newPhaseClock() *phaseClock {
	return &phaseClock{start: time.Now(), ms: make(map[string]float64, len(PhaseNames))}
}

// begin returns a function that, when called, adds the time since begin to
// phase name.
func (p *phaseClock) begin(name string) func() {
	t := time.Now()
	return func() { p.ms[name] += ms(time.Since(t)) }
}

// snapshot returns every phase (zero for those that did not run).
func (p *phaseClock) snapshot() map[string]float64 {
	out := make(map[string]float64, len(PhaseNames))
	for _, n := range PhaseNames {
		out[n] = p.ms[n]
	}
	return out
}

func (p *phaseClock) total() float64 { return ms(time.Since(p.start)) }

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
