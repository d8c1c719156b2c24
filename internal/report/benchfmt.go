package report

import (
	"fmt"
	"strings"
)

// renderBenchTxt writes bench.txt in the Go benchmark format (readable by
// benchstat and golang.org/x/perf/benchfmt): configuration lines per run,
// then one line per valid sample in block order,
//
//	BenchmarkVigil/cell=x1000/arm=A 1 <wall> ns/op <user> user-ns/op ...
//
// Warm-up and invalid samples are not written.
func renderBenchTxt(s *Summary) []byte {
	var b strings.Builder
	for _, r := range s.Runs {
		fmt.Fprintf(&b, "goos: %s\n", cfg(r.Host.OS))
		fmt.Fprintf(&b, "goarch: %s\n", cfg(r.Host.Arch))
		b.WriteString("pkg: vigil\n")
		fmt.Fprintf(&b, "host_class: %s\n", cfg(r.HostClass))
		fmt.Fprintf(&b, "kernel: %s\n", cfg(r.Host.Kernel))
		fmt.Fprintf(&b, "cpus: %d\n", r.Host.CPUs)
		fmt.Fprintf(&b, "seed: %d\n", r.Seed)
		for _, k := range sortedKeys(r.Versions) {
			fmt.Fprintf(&b, "version-%s: %s\n", cfgKey(k), cfg(r.Versions[k]))
		}
		for _, cs := range r.Cells {
			for _, a := range cs.Arms {
				for _, blk := range a.blocks() {
					sm := a.byBlock[blk]
					fmt.Fprintf(&b, "BenchmarkVigil/cell=%s/arm=%s 1 %d ns/op %d user-ns/op %d sys-ns/op %d peak-rss-B",
						cfgKey(cs.Name), cfgKey(a.Arm), sm.WallNS, sm.UserNS, sm.SysNS, sm.MaxRSSBytes)
					if sm.TreePeakBytes >= 0 {
						fmt.Fprintf(&b, " %d tree-peak-B", sm.TreePeakBytes)
					}
					fmt.Fprintf(&b, " %d trace-B %d archive-B\n", sm.Artifacts.TraceBytes, sm.Artifacts.ArchiveBytes)
				}
			}
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// cfg makes a configuration value single-line; cfgKey makes a name safe
// inside a benchmark name or key (no spaces, no slashes, no '=').
func cfg(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	if v == "" {
		return "unknown"
	}
	return v
}

func cfgKey(v string) string {
	r := strings.NewReplacer(" ", "_", "\t", "_", "/", "_", "=", "_", ":", "_")
	v = r.Replace(v)
	if v == "" {
		return "unknown"
	}
	return v
}
