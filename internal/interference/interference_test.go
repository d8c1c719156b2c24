package interference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBusy(t *testing.T) {
	for _, c := range []struct {
		stat string
		want int64
		ok   bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 5 50 9000 300 7 3 2 40 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 100 + 5 + 50 + 7 + 3 + 2, true},
		{"intr 1 2 3\n", 0, false},
		{"cpu  1 2 x 4 5 6 7 8\n", 0, false},
	} {
		got, ok := parseBusy(c.stat)
		if got != c.want || ok != c.ok {
			t.Errorf("parseBusy(%q) = %d, %v; want %d, %v", c.stat, got, ok, c.want, c.ok)
		}
	}
}

func TestCountCPUs(t *testing.T) {
	if n := countCPUs("cpu  1 2 3\ncpu0 1\ncpu1 2\ncpu12 3\nintr 5\n"); n != 3 {
		t.Errorf("countCPUs = %d, want 3", n)
	}
}

func TestParseSomeTotal(t *testing.T) {
	got, ok := parseSomeTotal("some avg10=52.64 avg60=34.60 avg300=18.62 total=98507400\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n")
	if !ok || got != 98507400 {
		t.Errorf("some total = %d, %v", got, ok)
	}
	if _, ok := parseSomeTotal("full avg10=0 total=7\n"); ok {
		t.Error("a file without a some line has no total")
	}
	if v := parseSomeAvg10("some avg10=12.50 avg60=1 total=3\n"); v != 12.5 {
		t.Errorf("avg10 = %v", v)
	}
}

func TestMeasure(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Snapshot{At: t0, BusyTicks: 1000, CPUs: 2, Load1: 0.25, PressureUS: map[string]int64{"cpu": 10, "io": 0, "memory": 5}}
	// 200 ms of wall; 30 ticks (300 ms of CPU) busy on the host, 100 ms
	// of it the tree's: 1 CPU foreign on average.
	b := Snapshot{At: t0.Add(200 * time.Millisecond), BusyTicks: 1030, CPUs: 2, Load1: 3, PressureUS: map[string]int64{"cpu": 50_010, "io": 20_000, "memory": 5}}
	in := Measure(a, b, Tree{CPU: 100 * time.Millisecond, Voluntary: 4, Preempted: 9})
	if in.ForeignCPUs == nil || *in.ForeignCPUs != 1 {
		t.Errorf("foreign CPUs %v, want 1", in.ForeignCPUs)
	}
	if *in.CPUPressureSome != 0.25 || *in.IOPressureSome != 0.1 || *in.MemoryPressureSome != 0 {
		t.Errorf("pressure cpu %v io %v memory %v; want 0.25 0.1 0", *in.CPUPressureSome, *in.IOPressureSome, *in.MemoryPressureSome)
	}
	if *in.VoluntaryCtxSwitches != 4 || *in.InvoluntaryCtxSwitches != 9 || *in.Load1AtStart != 0.25 || in.CPUMigrations != nil {
		t.Errorf("switches %d/%d, load %v, migrations %v", *in.VoluntaryCtxSwitches, *in.InvoluntaryCtxSwitches, *in.Load1AtStart, in.CPUMigrations)
	}
	// 2 CPUs × 10 ms over 200 ms: good to 0.1 CPU, so 1.0 is over 0.85
	// but not over 0.95.
	if *in.ForeignCPUsResolution != 0.1 {
		t.Errorf("resolution %v, want 0.1", *in.ForeignCPUsResolution)
	}
	if !Contended(&in, 0.85) || Contended(&in, 0.95) || Contended(&in, 0) {
		t.Errorf("Contended at 0.85, 0.95, 0 (off) = %v %v %v; want true false false", Contended(&in, 0.85), Contended(&in, 0.95), Contended(&in, 0))
	}
	if r := Reason(0.5); !strings.Contains(r, "0.50 CPUs") {
		t.Errorf("Reason = %q", r)
	}

	// Tick rounding below the tree's own CPU is not negative load.
	c := Snapshot{At: t0.Add(200 * time.Millisecond), BusyTicks: 1005, PressureUS: map[string]int64{}}
	in = Measure(a, c, Tree{CPU: 60 * time.Millisecond})
	if *in.ForeignCPUs != 0 {
		t.Errorf("foreign CPUs %v, want 0", *in.ForeignCPUs)
	}
	// What the host did not provide is nil and named, never 0.
	if in.CPUPressureSome != nil || !mentions(in.Unavailable, "cpu_migrations") {
		t.Errorf("pressure %v, unavailable %v", in.CPUPressureSome, in.Unavailable)
	}
	noStat := Snapshot{At: t0.Add(time.Second), BusyTicks: -1, why: []string{"foreign_cpus: no /proc/stat"}}
	in = Measure(a, noStat, Tree{})
	if in.ForeignCPUs != nil || Contended(&in, 0.1) || !mentions(in.Unavailable, "foreign_cpus") {
		t.Errorf("without /proc/stat: foreign %v, unavailable %v", in.ForeignCPUs, in.Unavailable)
	}
}

func mentions(list []string, word string) bool {
	for _, s := range list {
		if strings.Contains(s, word) {
			return true
		}
	}
	return false
}

func TestReadHost(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil\n")
	write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n")
	write("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n")
	write("sys/devices/system/cpu/smt/active", "1\n")
	write("sys/devices/system/cpu/isolated", "\n")
	write("proc/meminfo", "MemTotal: 4000000 kB\nMemAvailable: 512000 kB\nSwapTotal: 1024 kB\nSwapFree: 0 kB\n")
	write("proc/loadavg", "1.50 0.7 0.2 3/200 999\n")
	write("proc/pressure/cpu", "some avg10=20.00 avg60=1 avg300=0 total=5\n")
	defer func(s, p string) { sysRoot, procRoot = s, p }(sysRoot, procRoot)
	sysRoot, procRoot = filepath.Join(root, "sys"), filepath.Join(root, "proc")
	h := ReadHost()
	if strings.Join(h.Governors, ",") != "performance,schedutil" || h.Boost != "on" || h.SMT != "on" || h.IsolatedCPUs != "" ||
		h.MemAvailable != 512000*1024 || h.SwapUsed != 1024*1024 || h.Load1 != 1.5 || h.CPUPressure != 20 {
		t.Errorf("host %+v", h)
	}
	for _, want := range []string{`governor "schedutil"`, "boost", "SMT", "load average 1.50", "CPU pressure 20%", "swap", "available"} {
		if !mentions(h.Warnings, want) {
			t.Errorf("no warning about %s in %q", want, h.Warnings)
		}
	}
	if mentions(h.Warnings, `"performance"`) {
		t.Errorf("the performance governor is not a warning: %q", h.Warnings)
	}

	// A host exposing none of it: nothing invented, nothing warned.
	sysRoot, procRoot = filepath.Join(root, "none"), filepath.Join(root, "none")
	h = ReadHost()
	if len(h.Governors) != 0 || h.Boost != "" || h.SMT != "" || h.MemAvailable != -1 || h.Load1 != -1 || h.CPUPressure != -1 || len(h.Warnings) != 0 {
		t.Errorf("empty host %+v", h)
	}
}
