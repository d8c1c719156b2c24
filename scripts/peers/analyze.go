//go:build linux

package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"vigil/internal/stats"
)

// sample is one timed run of the workload under one observer.
type sample struct {
	Seq      int    `json:"seq"`   // position in the run
	Block    int    `json:"block"` // negative for warm-up blocks
	Observer string `json:"observer"`
	N        int    `json:"n"`
	WallNS   int64  `json:"wall_ns"`
	// MaxRSSKiB is the observer's peak resident set: ru_maxrss for an
	// observer the harness starts (the largest process of its tree, so at
	// least the workload's own), VmHWM for the audit daemon.
	MaxRSSKiB int64  `json:"max_rss_kib"`
	FileOpens int    `json:"file_opens"`       // -1 for bare
	SetEvents int    `json:"set_events"`       // -1 for bare
	Lost      int64  `json:"lost"`             // -1 when the observer does not say
	Detail    string `json:"detail,omitempty"` // vigil: its kernel-layer verdict
	Err       string `json:"error,omitempty"`
}

func (s sample) ok() bool { return s.Err == "" && s.Block >= 0 }

// result is one row of the table: an observer at one N.
type result struct {
	Observer string  `json:"observer"`
	N        int     `json:"n"`
	Blocks   int     `json:"blocks"`   // samples used
	Failures int     `json:"failures"` // samples that failed
	WallMS   float64 `json:"wall_ms_median"`
	// Ratio is median(observer)/median(bare) over blocks, with a paired
	// percentile bootstrap interval (blocks resampled whole).
	Ratio interval `json:"ratio_to_bare"`
	// FixedMS is the Hodges–Lehmann estimate of observer − bare at N=0,
	// with its Wilcoxon signed-rank interval: setup and teardown.
	FixedMS *interval `json:"fixed_ms,omitempty"`
	// PerEventUS is the Hodges–Lehmann estimate, over blocks, of
	// ((obs−bare at N) − (obs−bare at N=0)) / events(N), events(N)
	// being the events of the traced set N adds (addedEvents), with
	// its signed-rank interval: the cost per event with fixed costs
	// removed.
	PerEventUS *interval `json:"per_event_us,omitempty"`
	// FileOpens: the fewest and most archive-file opens captured in a
	// sample, against Expected = N.
	FileOpensMin int     `json:"file_opens_min"`
	FileOpensMax int     `json:"file_opens_max"`
	Expected     int     `json:"expected_file_opens"`
	SetEvents    int     `json:"set_events_median"`
	LostMax      int64   `json:"lost_max"`
	RSSMiB       float64 `json:"peak_rss_mib_median"`
}

// interval is stats.Interval with JSON-friendly infinities (null).
type interval struct {
	Est        float64  `json:"est"`
	Lo         *float64 `json:"lo"`
	Hi         *float64 `json:"hi"`
	Confidence float64  `json:"confidence"`
}

func fromStats(iv stats.Interval, scale float64) interval {
	fin := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		v *= scale
		return &v
	}
	return interval{Est: iv.Est * scale, Lo: fin(iv.Lo), Hi: fin(iv.Hi), Confidence: iv.Confidence}
}

const confidence = 0.95

// analyze turns samples into one result per observer and N (bare
// included, for its wall time and memory). Observers are in the order
// given, N ascending.
func analyze(samples []sample, observers []string, ns []int, filesPerDir int, seed uint64) []result {
	// wall[observer][n][block] for usable samples.
	wall := map[string]map[int]map[int]float64{}
	for _, s := range samples {
		if !s.ok() {
			continue
		}
		if wall[s.Observer] == nil {
			wall[s.Observer] = map[int]map[int]float64{}
		}
		if wall[s.Observer][s.N] == nil {
			wall[s.Observer][s.N] = map[int]float64{}
		}
		wall[s.Observer][s.N][s.Block] = float64(s.WallNS)
	}
	hasZero := slices.Contains(ns, 0)
	var out []result
	for _, obs := range observers {
		for _, n := range ns {
			r := result{Observer: obs, N: n, Expected: n, LostMax: -1, FileOpensMin: -1, FileOpensMax: -1}
			var walls, rss, events []float64
			first := true
			for _, s := range samples {
				if s.Observer != obs || s.N != n || s.Block < 0 {
					continue
				}
				if s.Err != "" {
					r.Failures++
					continue
				}
				r.Blocks++
				walls = append(walls, float64(s.WallNS))
				rss = append(rss, float64(s.MaxRSSKiB)/1024)
				if obs == "bare" {
					continue
				}
				events = append(events, float64(s.SetEvents))
				if first || s.FileOpens < r.FileOpensMin {
					r.FileOpensMin = s.FileOpens
				}
				if first || s.FileOpens > r.FileOpensMax {
					r.FileOpensMax = s.FileOpens
				}
				r.LostMax = max(r.LostMax, s.Lost)
				first = false
			}
			if r.Blocks == 0 {
				out = append(out, r)
				continue
			}
			r.WallMS = stats.Median(walls) / 1e6
			r.RSSMiB = stats.Median(rss)
			if obs == "bare" {
				out = append(out, r)
				continue
			}
			r.SetEvents = int(stats.Median(events))
			bare, mine := paired(wall["bare"][n], wall[obs][n])
			r.Ratio = fromStats(stats.RatioOfMedians(bare, mine, true, 4000, seed^uint64(n), confidence), 1)
			if hasZero && n == 0 {
				bare0, mine0 := paired(wall["bare"][0], wall[obs][0])
				d := make([]float64, len(mine0))
				for i := range d {
					d[i] = mine0[i] - bare0[i]
				}
				if len(d) > 0 {
					iv := fromStats(stats.SignedRank(d, confidence).Interval, 1e-6)
					r.FixedMS = &iv
				}
			}
			if hasZero && n > 0 {
				added := float64(addedEvents(n, filesPerDir))
				var per []float64
				for b, w := range wall[obs][n] {
					bw, ok1 := wall["bare"][n][b]
					w0, ok2 := wall[obs][0][b]
					b0, ok3 := wall["bare"][0][b]
					if ok1 && ok2 && ok3 {
						per = append(per, ((w-bw)-(w0-b0))/added)
					}
				}
				slices.Sort(per) // map order is random; the estimate must not be
				if len(per) > 0 {
					iv := fromStats(stats.SignedRank(per, confidence).Interval, 1e-3)
					r.PerEventUS = &iv
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// paired returns a[b] and c[b] for every block b in both, in block
// order, so that a seeded bootstrap over them is reproducible.
func paired(a, c map[int]float64) (x, y []float64) {
	var blocks []int
	for b := range a {
		if _, ok := c[b]; ok {
			blocks = append(blocks, b)
		}
	}
	slices.Sort(blocks)
	for _, b := range blocks {
		x, y = append(x, a[b]), append(y, c[b])
	}
	return x, y
}

// peerStatus says whether a peer ran and, if not, why.
type peerStatus struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Ran     bool   `json:"ran"`
	Reason  string `json:"reason,omitempty"` // why it did not run
	// Command is how the workload ran under it.
	Command string `json:"command,omitempty"`
}

// renderTable writes the Markdown table: one row per observer and N, a
// row per peer that did not run, and the notes that define the columns.
func renderTable(rs []result, peers []peerStatus) string {
	var b strings.Builder
	b.WriteString("| observer | files N | wall ms (median) | × bare [95% CI] | fixed ms at N=0 [95% CI] | µs per event [95% CI] | file opens captured / expected | lost | peak RSS MiB |\n")
	b.WriteString("|---|---:|---:|---|---|---|---:|---:|---:|\n")
	for _, r := range rs {
		if r.Blocks == 0 {
			fmt.Fprintf(&b, "| %s | %d | no usable sample (%d failed) | | | | | | |\n", r.Observer, r.N, r.Failures)
			continue
		}
		name := r.Observer
		if r.Failures > 0 {
			name += fmt.Sprintf(" (%d failed)", r.Failures)
		}
		if r.Observer == "bare" {
			fmt.Fprintf(&b, "| %s | %d | %.1f | 1 | | | | | %.1f |\n", name, r.N, r.WallMS, r.RSSMiB)
			continue
		}
		fixed, per := "", ""
		if r.FixedMS != nil {
			fixed = fmtInterval(*r.FixedMS, "%.1f")
		}
		if r.PerEventUS != nil {
			per = fmtInterval(*r.PerEventUS, "%.2f")
		}
		captured := fmt.Sprintf("%d / %d", r.FileOpensMin, r.Expected)
		if r.FileOpensMin != r.FileOpensMax {
			captured = fmt.Sprintf("%d–%d / %d", r.FileOpensMin, r.FileOpensMax, r.Expected)
		}
		lost := "n/a"
		if r.LostMax >= 0 {
			lost = fmt.Sprint(r.LostMax)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %s | %s | %s | %s | %s | %.1f |\n",
			name, r.N, r.WallMS, fmtInterval(r.Ratio, "%.2f"), fixed, per, captured, lost, r.RSSMiB)
	}
	for _, p := range peers {
		if !p.Ran {
			fmt.Fprintf(&b, "| %s | | not run: %s | | | | | | |\n", p.Name, mdEscape(p.Reason))
		}
	}
	return b.String()
}

// fmtInterval prints "est [lo, hi]", or "est [n too small]" when the
// blocks cannot give an interval at the confidence asked.
func fmtInterval(iv interval, f string) string {
	if math.IsNaN(iv.Est) {
		return "n/a"
	}
	if iv.Lo == nil || iv.Hi == nil {
		return fmt.Sprintf(f+" [too few blocks]", iv.Est)
	}
	return fmt.Sprintf(f+" ["+f+", "+f+"]", iv.Est, *iv.Lo, *iv.Hi)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// renderMarkdown is peers.md: what was run where, the table and what
// its columns mean.
func renderMarkdown(rep *report) string {
	var b strings.Builder
	m := rep.Machine
	fmt.Fprintf(&b, "Workload: GNU tar extracting an archive of N files (1–512 bytes, %d per directory) into a fresh directory on a tmpfs. ", rep.FilesPerDir)
	fmt.Fprintf(&b, "%d blocks (after %d warm-up), each running every observer once at every N in a seeded random order (seed %d). ", rep.Blocks, rep.Warmup, rep.Seed)
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, %s memory, kernel %s; tmpfs `%s`; load average at start / end: %s.\n\n",
		m.CPUModel, m.CPUs, m.MemTotal, m.Host.Kernel, m.Tmpfs, strings.Join(m.LoadAvg, " / "))
	b.WriteString(renderTable(rep.Results, rep.Peers))
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Wall time is the observer's whole command, from its start until its record is complete (vigil: archive written; strace: exited; bpftrace: compiled, attached, run, exited; auditd: rule added, run, every record in the log, rule removed). × bare is median(observer) / median(bare) with a 95%% paired bootstrap interval over blocks.\n")
	fmt.Fprintf(&b, "- Fixed ms is observer − bare at N=0 (Hodges–Lehmann, Wilcoxon signed-rank 95%% interval); µs per event is ((observer − bare at N) − (observer − bare at N=0)) / (N + D + 1) per block, the same estimator: the cost of each event with setup and teardown removed.\n")
	fmt.Fprintf(&b, "- %s\n", rep.Expected)
	fmt.Fprintf(&b, "- Workload profile (strace -f -c of bare tar): %s.\n", rep.ProfileCheck)
	b.WriteString("- Lost is what the observer itself reports losing: vigil's ring-buffer drops, bpftrace's \"Lost N events\", the kernel's audit lost counter (which counts records, and an event has several: SYSCALL, CWD, PATH, PROCTITLE; the captured column says whether whole events went missing); strace cannot lose events (it stops the tracee), so n/a.\n")
	b.WriteString("- Peak RSS: ru_maxrss of the observer's command, from GNU time (the largest process of its tree, so never below tar's own, shown on the bare rows; every arm, bare included, runs under GNU time); for auditd the daemon's VmHWM, reset before each sample. Kernel memory (BPF maps and ring buffers, the audit backlog) is not included.\n")
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Observer, "vigil") {
			continue
		}
		seen := map[string]int{}
		for _, s := range rep.Samples {
			if s.ok() && s.Observer == r.Observer && s.N == r.N && s.Detail != "kernel_layer=complete" {
				seen[s.Detail]++
			}
		}
		for d, k := range seen {
			fmt.Fprintf(&b, "- vigil at N=%d: %d sample(s) with %s\n", r.N, k, d)
		}
	}
	b.WriteString("- vigil records more than the traced set (forks, exits, file-tree changes such as tar's mkdir, chown, chmod); its wall time pays for those too, and only opens, execs and connects are counted here.\n")
	for _, p := range rep.Peers {
		if p.Ran && p.Version != "" {
			fmt.Fprintf(&b, "- %s: %s — `%s`\n", p.Name, p.Version, p.Command)
		}
	}
	return b.String()
}
