//go:build linux

package affinity

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-1", []int{0, 1}},
		{"1,0", []int{0, 1}},
	} {
		set, err := Parse("--cpus", c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if set.Count() != len(c.want) {
			t.Errorf("%q: %d CPUs, want %v", c.in, set.Count(), c.want)
		}
		for _, cpu := range c.want {
			if !set.IsSet(cpu) {
				t.Errorf("%q: CPU %d not set", c.in, cpu)
			}
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0,,1", "1023", "5000"} {
		if _, err := Parse("--runner-cpus", bad); err == nil || !strings.Contains(err.Error(), "--runner-cpus") {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}
