package evidence

import (
	"math/rand/v2"
	"slices"
	"testing"

	"vigil/internal/event"
)

// surfaceDiff must name exactly the field that comparing with BuildSurface
// names, for the derived surface and for every kind of edit to it.
func TestSurfaceDiffMatchesRebuild(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var kernel []event.Kernel
	paths := []string{"a", "b", "c", "d", "e", "dir/f", "\u00e9", ""}
	for i := 0; i < 400; i++ {
		e := event.Kernel{Seq: uint64(i)}
		switch r.IntN(4) {
		case 0:
			e.Kind, e.Exec = event.KindExec, &event.Exec{Filename: paths[r.IntN(len(paths))]}
		case 1:
			e.Kind, e.Connect = event.KindConnect, &event.Connect{Family: []string{"inet", "unix"}[r.IntN(2)], Addr: paths[r.IntN(3)], Port: uint16(r.IntN(3))}
		default:
			e.Kind, e.Open = event.KindOpen, &event.Open{Path: paths[r.IntN(len(paths))], Ret: int64(r.IntN(5)) - 1,
				Access: []string{event.AccessRead, event.AccessWrite, event.AccessReadWrite}[r.IntN(3)],
				Create: r.IntN(3) == 0, Truncate: r.IntN(4) == 0, Append: r.IntN(5) == 0}
		}
		kernel = append(kernel, e)
	}
	lists := func(s *CapabilitySurface) []*[]string {
		return []*[]string{&s.FilesRead, &s.FilesWritten, &s.FilesCreated, &s.OpenFailures, &s.Execs}
	}
	edits := []func(s *CapabilitySurface, l *[]string){
		func(s *CapabilitySurface, l *[]string) {},
		func(s *CapabilitySurface, l *[]string) { *l = nil },
		func(s *CapabilitySurface, l *[]string) { *l = (*l)[1:] },
		func(s *CapabilitySurface, l *[]string) { *l = (*l)[:len(*l)-1] },
		func(s *CapabilitySurface, l *[]string) { *l = append(*l, "zzz") },
		func(s *CapabilitySurface, l *[]string) { *l = append([]string{(*l)[0]}, *l...) },
		func(s *CapabilitySurface, l *[]string) { (*l)[0], (*l)[1] = (*l)[1], (*l)[0] },
		func(s *CapabilitySurface, l *[]string) { (*l)[len(*l)-1] += "x" },
		func(s *CapabilitySurface, l *[]string) { s.Schema = "other" },
		func(s *CapabilitySurface, l *[]string) { s.Network = s.Network[1:] },
		func(s *CapabilitySurface, l *[]string) { s.Network = nil },
		func(s *CapabilitySurface, l *[]string) { s.Network[0], s.Network[1] = s.Network[1], s.Network[0] },
		func(s *CapabilitySurface, l *[]string) { s.Network = append(s.Network, s.Network[len(s.Network)-1]) },
		func(s *CapabilitySurface, l *[]string) { s.Network[0].Port = 9 },
	}
	for _, k := range [][]event.Kernel{nil, kernel} {
		for li := 0; li < 5; li++ {
			for ei, edit := range edits {
				want := BuildSurface(k)
				got := BuildSurface(k)
				l := lists(&got)[li]
				if len(*l) < 2 && ei >= 2 && ei <= 7 || len(got.Network) < 2 && ei >= 9 {
					continue
				}
				*l = slices.Clone(*l)
				got.Network = slices.Clone(got.Network)
				edit(&got, l)
				d, w := surfaceDiff(k, &got), firstDiff(want, &got)
				if d != w {
					t.Errorf("events %d, list %d, edit %d: surfaceDiff = %q, rebuild comparison = %q", len(k), li, ei, d, w)
				}
				if ei == 0 && d != "" {
					t.Errorf("events %d: the derived surface differs in %s", len(k), d)
				}
			}
		}
	}
}
