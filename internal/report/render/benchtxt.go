package render

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/perf/benchfmt"

	"vigil/internal/wire"
)

// BenchTxt writes bench.txt in the Go benchmark format (readable by
// benchstat): file configuration per run, then one result per valid
// sample in block order,
//
//	BenchmarkVigil/cell=x1000/arm=A 1 <wall> ns/op <user> user-ns/op ...
//
// Warm-up and invalid samples are not written.
func BenchTxt(s *wire.Summary) ([]byte, error) {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	for _, r := range s.Runs {
		cfg := []benchfmt.Config{
			fileConfig("goos", r.Host.OS), fileConfig("goarch", r.Host.Arch), fileConfig("pkg", "vigil"),
			fileConfig("host_class", r.HostClass), fileConfig("kernel", r.Host.Kernel),
			fileConfig("cpus", fmt.Sprint(r.Host.CPUs)), fileConfig("seed", fmt.Sprint(r.Seed)),
		}
		for _, k := range sortedKeys(r.Versions) {
			cfg = append(cfg, fileConfig("version-"+cfgKey(k), r.Versions[k]))
		}
		for _, cs := range r.Cells {
			for _, a := range cs.Arms {
				name := fmt.Sprintf("Vigil/cell=%s/arm=%s", cfgKey(cs.Name), cfgKey(a.Arm))
				for _, b := range a.Blocks {
					vals := []benchfmt.Value{
						{Value: float64(b.WallNS), Unit: "ns/op"},
						{Value: float64(b.UserNS), Unit: "user-ns/op"},
						{Value: float64(b.SysNS), Unit: "sys-ns/op"},
						{Value: float64(b.MaxRSSBytes), Unit: "peak-rss-B"},
					}
					if b.HasTreePeak() {
						vals = append(vals, benchfmt.Value{Value: float64(b.TreePeakBytes), Unit: "tree-peak-B"})
					}
					vals = append(vals, benchfmt.Value{Value: float64(b.TraceBytes), Unit: "trace-B"}, benchfmt.Value{Value: float64(b.ArchiveBytes), Unit: "archive-B"})
					res := &benchfmt.Result{Config: cfg, Name: benchfmt.Name(name), Iters: 1, Values: vals}
					if err := w.Write(res); err != nil {
						return nil, fmt.Errorf("bench.txt: %v", err)
					}
				}
			}
		}
	}
	return buf.Bytes(), nil
}

// fileConfig makes a configuration value single-line, "unknown" when empty
// (an empty value would delete the key).
func fileConfig(key, v string) benchfmt.Config {
	v = strings.Join(strings.Fields(v), " ")
	if v == "" {
		v = "unknown"
	}
	return benchfmt.Config{Key: key, Value: []byte(v), File: true}
}

// cfgKey makes a name safe inside a benchmark name or key (no spaces, no
// slashes, no '=').
func cfgKey(v string) string {
	r := strings.NewReplacer(" ", "_", "\t", "_", "/", "_", "=", "_", ":", "_")
	v = r.Replace(v)
	if v == "" {
		return "unknown"
	}
	return v
}
