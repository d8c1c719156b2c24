//go:build linux

package main

import (
	"math"
	"strings"
	"testing"
)

// fixedSamples: 9 blocks; bare takes 10 ms at N=0 and 110 ms at N=1000;
// "slow" adds 40 ms of setup and 20 µs per event (1002 events at
// N=1000: 1000 files, 1 directory, the target directory), plus a
// per-block jitter shared by all arms (median 0); strace at N=1000 fails once and
// misses 2 opens once.
func fixedSamples() []sample {
	var ss []sample
	jitter := []float64{0, 1, -1, 2, -2, 0.5, -0.5, 1.5, -1.5}
	for b, j := range jitter {
		ms := func(v float64) int64 { return int64((v + j) * 1e6) }
		ss = append(ss,
			sample{Block: b, Observer: "bare", N: 0, WallNS: ms(10), MaxRSSKiB: 3 * 1024},
			sample{Block: b, Observer: "bare", N: 1000, WallNS: ms(110), MaxRSSKiB: 3 * 1024},
			sample{Block: b, Observer: "slow", N: 0, WallNS: ms(50), MaxRSSKiB: 40 * 1024, SetEvents: 8, Lost: 0},
			sample{Block: b, Observer: "slow", N: 1000, WallNS: ms(110 + 40 + 1002*0.020), MaxRSSKiB: 48 * 1024,
				FileOpens: 1000, SetEvents: 1010, Lost: 0},
		)
		s := sample{Block: b, Observer: "strace", N: 1000, WallNS: ms(300), MaxRSSKiB: 4 * 1024, FileOpens: 1000, SetEvents: 1010, Lost: -1}
		if b == 3 {
			s.Err = "strace: exit status 1"
		}
		if b == 5 {
			s.FileOpens = 998
		}
		ss = append(ss, s)
	}
	// A warm-up sample far off must not count.
	ss = append(ss, sample{Block: -1, Observer: "slow", N: 1000, WallNS: 9e9})
	return ss
}

func TestAnalyze(t *testing.T) {
	rs := analyze(fixedSamples(), []string{"bare", "slow", "strace"}, []int{0, 1000}, 1000, 1)
	get := func(obs string, n int) result {
		for _, r := range rs {
			if r.Observer == obs && r.N == n {
				return r
			}
		}
		t.Fatalf("no result for %s N=%d", obs, n)
		return result{}
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	slow0, slow := get("slow", 0), get("slow", 1000)
	near("slow N=0 ratio", slow0.Ratio.Est, 5, 1e-9)
	near("slow N=1000 ratio", slow.Ratio.Est, (150+20.04)/110, 1e-9)
	if slow.Ratio.Lo == nil || *slow.Ratio.Lo > slow.Ratio.Est || *slow.Ratio.Hi < slow.Ratio.Est {
		t.Errorf("slow N=1000 ratio interval %+v does not hold its estimate", slow.Ratio)
	}
	if slow0.FixedMS == nil || slow.FixedMS != nil {
		t.Fatalf("fixed cost belongs to N=0 only: %+v / %+v", slow0.FixedMS, slow.FixedMS)
	}
	near("slow fixed ms", slow0.FixedMS.Est, 40, 1e-6)
	if slow.PerEventUS == nil {
		t.Fatal("no per-event cost at N=1000")
	}
	near("slow µs per event", slow.PerEventUS.Est, 20, 1e-6)
	near("slow RSS MiB", slow.RSSMiB, 48, 1e-9)
	if slow.Blocks != 9 || slow.Failures != 0 {
		t.Errorf("slow: %d blocks, %d failures; the warm-up must not count", slow.Blocks, slow.Failures)
	}
	st := get("strace", 1000)
	if st.Blocks != 8 || st.Failures != 1 || st.FileOpensMin != 998 || st.FileOpensMax != 1000 || st.LostMax != -1 {
		t.Errorf("strace: %+v", st)
	}
	if st.PerEventUS != nil {
		t.Errorf("strace has no N=0 samples, yet a per-event cost %+v", st.PerEventUS)
	}
	near("strace ratio", st.Ratio.Est, 300.0/110, 0.05)
}

func TestRenderTable(t *testing.T) {
	rs := analyze(fixedSamples(), []string{"bare", "slow", "strace"}, []int{0, 1000}, 1000, 1)
	peers := []peerStatus{{Name: "bare", Ran: true}, {Name: "auditd", Reason: "an audit daemon (pid 9) | already runs"}}
	md := renderTable(rs, peers)
	lines := strings.Split(strings.TrimSpace(md), "\n")
	if len(lines) != 2+6+1 {
		t.Fatalf("%d lines, want header, separator, 6 rows and 1 not-run row:\n%s", len(lines), md)
	}
	for _, want := range []string{
		"| bare | 1000 | 110.0 | 1 | | | | | 3.0 |",
		"| slow | 0 | 50.0 | 5.00 [",
		"| 40.0 [",
		"| 20.00 [",
		"| 1000 / 1000 | 0 | 48.0 |",
		"| strace (1 failed) | 1000 | 299.8 | 2.73 [",
		"| 998–1000 / 1000 | n/a | 4.0 |",
		`| auditd | | not run: an audit daemon (pid 9) \| already runs |`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	// With 5 blocks (fewer than 6) the ratio's 95% interval is said to be
	// missing, not drawn.
	few := analyze(fixedSamples()[:5*5], []string{"bare", "slow"}, []int{0, 1000}, 1000, 1)
	if md := renderTable(few, nil); !strings.Contains(md, "[too few blocks]") {
		t.Errorf("5 blocks rendered without saying the interval is missing:\n%s", md)
	}
}
