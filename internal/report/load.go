package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"vigil/internal/wire"
)

// File names inside a bench output directory.
const (
	PlanFile    = "plan.json"
	SamplesFile = "samples.jsonl"
)

// maxLine bounds one samples.jsonl line; a sample is a few KiB.
const maxLine = 16 << 20

// Load reads plan.json and samples.jsonl from each directory. The result
// is parallel: samples[i] are the samples of plans[i] (dirs[i]). Errors are
// one line naming the file (and line) and what is wrong: a missing
// directory or file, malformed JSON, a wrong schema id, a sample whose cell
// or arm is not in its plan, or a directory without samples.
func Load(dirs ...string) ([]wire.Plan, [][]wire.Sample, error) {
	if len(dirs) == 0 {
		return nil, nil, errors.New("no input directory given")
	}
	plans := make([]wire.Plan, 0, len(dirs))
	all := make([][]wire.Sample, 0, len(dirs))
	for _, dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s", dir, errText(err))
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("%s: not a directory", dir)
		}
		p, err := loadPlan(filepath.Join(dir, PlanFile))
		if err != nil {
			return nil, nil, err
		}
		ss, err := loadSamples(filepath.Join(dir, SamplesFile), p)
		if err != nil {
			return nil, nil, err
		}
		plans = append(plans, p)
		all = append(all, ss)
	}
	return plans, all, nil
}

func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func loadPlan(path string) (wire.Plan, error) {
	var p wire.Plan
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("%s: %s", path, errText(err))
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("%s: malformed plan: %v", path, err)
	}
	if p.Schema != wire.PlanSchema {
		return p, fmt.Errorf("%s: schema %q, want %q", path, p.Schema, wire.PlanSchema)
	}
	if len(p.Arms) == 0 || len(p.Arms) != len(p.ArmKinds) {
		return p, fmt.Errorf("%s: arms and arm_kinds must be non-empty and of equal length", path)
	}
	if p.ArmExports != nil && len(p.ArmExports) != len(p.Arms) {
		return p, fmt.Errorf("%s: arm_exports must have one entry per arm", path)
	}
	for _, k := range p.ArmKinds {
		switch k {
		case wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC:
		default:
			return p, fmt.Errorf("%s: unknown arm kind %q", path, k)
		}
	}
	if len(p.Cells) == 0 {
		return p, fmt.Errorf("%s: plan has no cells", path)
	}
	if p.Blocks < 1 {
		return p, fmt.Errorf("%s: blocks %d: must be at least 1", path, p.Blocks)
	}
	return p, nil
}

func loadSamples(path string, p wire.Plan) ([]wire.Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, errText(err))
	}
	defer f.Close()
	cells := map[string]bool{}
	for _, c := range p.Cells {
		cells[c.Name] = true
	}
	kinds := map[string]wire.ArmKind{}
	for i, a := range p.Arms {
		kinds[a] = p.ArmKinds[i]
	}
	var out []wire.Sample
	ids := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			return nil, fmt.Errorf("%s:%d: empty line", path, line)
		}
		var s wire.Sample
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s:%d: malformed sample: %v", path, line, err)
		}
		switch {
		case s.Schema != wire.SampleSchema:
			return nil, fmt.Errorf("%s:%d: schema %q, want %q", path, line, s.Schema, wire.SampleSchema)
		case s.ID == "":
			return nil, fmt.Errorf("%s:%d: sample has no id", path, line)
		case !cells[s.Cell]:
			return nil, fmt.Errorf("%s:%d: cell %q is not in the plan", path, line, s.Cell)
		case kinds[s.Arm] == "":
			return nil, fmt.Errorf("%s:%d: arm %q is not in the plan", path, line, s.Arm)
		case s.ArmKind != "" && s.ArmKind != kinds[s.Arm]:
			return nil, fmt.Errorf("%s:%d: arm %q has kind %q, plan says %q", path, line, s.Arm, s.ArmKind, kinds[s.Arm])
		case s.Host.HostClass != "" && p.Host.HostClass != "" && s.Host.HostClass != p.Host.HostClass:
			return nil, fmt.Errorf("%s:%d: host_class %q differs from the plan's %q", path, line, s.Host.HostClass, p.Host.HostClass)
		}
		if prev, dup := ids[s.ID]; dup {
			return nil, fmt.Errorf("%s:%d: duplicate sample id %q (first on line %d)", path, line, s.ID, prev)
		}
		ids[s.ID] = line
		if s.ArmKind == "" {
			s.ArmKind = kinds[s.Arm]
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return out, nil
}
