package report

import (
	"fmt"
	"reflect"
	"sort"

	"vigil/internal/wire"
)

// run is one comparable set of samples: a plan (possibly split into shards)
// on one host_class. Samples are only ever compared within a run.
type run struct {
	plan    wire.Plan
	shards  []string
	samples []wire.Sample
	owned   map[string]bool // shard specs ("i/n") present
}

// planned counts the measured blocks the run's shards own. Shards deal
// blocks round-robin (block b belongs to shard i/n when b mod n = i-1), so
// one shard of a 20-block plan in 4 shards plans 5 blocks per arm.
func (r *run) planned() int {
	n := 0
	for b := 0; b < r.plan.Blocks; b++ {
		for spec := range r.owned {
			i, k, ok := parseShard(spec)
			if !ok || b%k == i-1 {
				n++
				break
			}
		}
	}
	return n
}

func parseShard(s string) (i, n int, ok bool) {
	if s == "" {
		return 1, 1, true
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 1 || i > n {
		return 0, 0, false
	}
	return i, n, true
}

// mergeRuns groups plans by (host_class, seed). Shards of one plan must
// agree on arms and cells; their samples are unioned and a sample id seen
// twice is refused.
func mergeRuns(plans []wire.Plan, samples [][]wire.Sample, sources []string) ([]*run, error) {
	if len(plans) != len(samples) {
		return nil, fmt.Errorf("%d plans but %d sample sets", len(plans), len(samples))
	}
	type key struct {
		hostClass string
		seed      int64
	}
	byKey := map[key]*run{}
	seen := map[key]map[string]string{}
	var order []key
	for i, p := range plans {
		src := fmt.Sprintf("input %d", i+1)
		if i < len(sources) {
			src = sources[i]
		}
		k := key{p.Host.HostClass, p.Seed}
		r := byKey[k]
		if r == nil {
			r = &run{plan: p, owned: map[string]bool{}}
			byKey[k] = r
			seen[k] = map[string]string{}
			order = append(order, k)
		} else {
			if !reflect.DeepEqual(r.plan.Arms, p.Arms) || !reflect.DeepEqual(r.plan.ArmKinds, p.ArmKinds) || !reflect.DeepEqual(r.plan.Cells, p.Cells) {
				return nil, fmt.Errorf("%s: plan shares seed %d and host_class %q with %s but differs in arms or cells", src, p.Seed, p.Host.HostClass, r.shards[0])
			}
			if p.Blocks > r.plan.Blocks {
				r.plan.Blocks = p.Blocks
			}
		}
		r.shards = append(r.shards, src)
		r.owned[p.Shard] = true
		for _, s := range samples[i] {
			if prev, dup := seen[k][s.ID]; dup {
				return nil, fmt.Errorf("%s: duplicate sample id %q (also in %s)", src, s.ID, prev)
			}
			seen[k][s.ID] = src
			r.samples = append(r.samples, s)
		}
	}
	out := make([]*run, 0, len(order))
	for _, k := range order {
		r := byKey[k]
		sort.SliceStable(r.samples, func(a, b int) bool {
			x, y := r.samples[a], r.samples[b]
			if x.Block != y.Block {
				return x.Block < y.Block
			}
			if x.Position != y.Position {
				return x.Position < y.Position
			}
			return x.Attempt < y.Attempt
		})
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no samples")
	}
	return out, nil
}
