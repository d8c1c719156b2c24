package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// Check verifies that the documents of b agree with each other: one run id
// everywhere; kernel events in strictly increasing Seq; health counts,
// seq_gaps, sdk event count and the session task balance (tasks that left
// or entered the session cgroup, BalanceSessionTasks) matching the layers; health verdicts
// (statuses, reasons, drop totals) exactly what BuildHealth gives for the
// inputs the health document records, so a document claiming complete
// while recording drops, read faults or skipped probe runs is caught; an SDK layer that health calls
// complete passing strict ingestion again; and the capability surface and
// correlation report equal to what the events derive. The error is an
// *EntryError naming the entry that disagrees, or the failure to read
// back what the digest moved to its scratch store (SpillTo), which says
// nothing about the bundle.
func Check(b *Bundle) error { return check(b, true) }

// CheckDerivedSurface is Check less the comparison of the capability
// surface with what the kernel layer derives, for a caller that has just
// set b.Surface to BuildSurface(b.Kernel) itself (with b.Run's run id):
// on a large layer that derivation is the costliest part of the check.
// It refuses a streamed bundle, whose digest derives the surface once
// for both.
func CheckDerivedSurface(b *Bundle) error { return check(b, false) }

func check(b *Bundle, surface bool) error {
	id := b.Run.RunID
	if id == "" {
		return entryErr(EntryRun, "empty run_id")
	}
	if !sort.StringsAreSorted(b.Run.EnvNames) {
		return entryErr(EntryRun, "env_names not sorted")
	}
	if b.Health.RunID != id {
		return entryErr(EntryHealth, "run_id %q differs from run.json's %q", b.Health.RunID, id)
	}
	if b.Surface.RunID != id {
		return entryErr(EntrySurface, "run_id %q differs from run.json's %q", b.Surface.RunID, id)
	}
	if b.Correlation != nil && b.Correlation.RunID != id {
		return entryErr(EntryCorrelation, "run_id %q differs from run.json's %q", b.Correlation.RunID, id)
	}
	for i := range b.SDK {
		if b.SDK[i].RunID != id {
			return entryErr(EntrySDK, "line %d: run_id %q differs from run.json's %q", i+1, b.SDK[i].RunID, id)
		}
	}
	d := b.Streamed
	switch {
	case d == nil:
		// Derived here from the events themselves, never from a digest
		// made earlier: events changed after Assemble are caught.
		d = newDigest(false)
		d.noSurface, d.noTimes, d.checkEvents = !surface, b.Correlation == nil, true
		d.Add(b.Kernel)
	case len(b.Kernel) > 0:
		return entryErr(EntryKernel, "a streamed bundle holds %d events of its own", len(b.Kernel))
	case !surface:
		return entryErr(EntrySurface, "a streamed bundle's surface is never derived by the caller")
	}
	if why := d.Disorder(); why != "" {
		return entryErr(EntryKernel, "%s", why)
	}
	if err := checkExit(b, d); err != nil {
		return err
	}
	if err := checkHealth(b, d); err != nil {
		return err
	}
	if err := checkSDK(b); err != nil {
		return err
	}
	if surface {
		var f string
		switch {
		case b.SurfacePathSource() != nil:
			// The lists are the digest's own (EachSurfacePath, ...):
			// there is nothing to compare them with.
			if b.Surface.hasLists() {
				return entryErr(EntrySurface, "lists of its own besides its digest's")
			}
			s := d.SurfaceWithoutPaths()
			s.RunID = id
			f = firstDiff(s, b.Surface)
		default:
			var err error
			if f, err = firstSurfaceDiff(d, &b.Surface, id); err != nil {
				// The scratch store failed, not the archive.
				return err
			}
		}
		if f != "" {
			return entryErr(EntrySurface, "%s differs from what %s derives", f, EntryKernel)
		}
	}
	if b.Correlation != nil {
		corr, err := d.Correlate(b.SDK)
		if err != nil {
			return err // the scratch store failed, not the archive
		}
		corr.RunID = id
		if f := firstDiff(corr, b.Correlation); f != "" {
			return entryErr(EntryCorrelation, "%s differs from what %s and %s derive", f, EntryKernel, EntrySDK)
		}
	}
	return nil
}

func checkHealth(b *Bundle, d *Digest) error {
	h := &b.Health
	counts := d.Counts()
	for _, k := range sortedKinds(counts, h.Counts) {
		if h.Counts[k] != counts[k] {
			return entryErr(EntryHealth, "counts.%s is %d but %s has %d %s events", k, h.Counts[k], EntryKernel, counts[k], k)
		}
	}
	if g := d.SeqGaps(); h.SeqGaps != g {
		return entryErr(EntryHealth, "seq_gaps is %d but %s is missing %d sequence numbers", h.SeqGaps, EntryKernel, g)
	}
	if err := checkReadFaults(h, d); err != nil {
		return err
	}
	st := d.SessionTasks()
	taskChecks := []struct {
		field     string
		got, want any
	}{
		{"cgroup_correlation.left_session_tasks", h.CgroupCorrelation.LeftSessionTasks, st.Left},
		{"cgroup_correlation.left_session_examples", h.CgroupCorrelation.LeftSessionExamples, st.LeftExamples},
		{"cgroup_correlation.entered_session_tasks", h.CgroupCorrelation.EnteredSessionTasks, st.Entered},
		{"cgroup_correlation.entered_session_examples", h.CgroupCorrelation.EnteredSessionExamples, st.EnteredExamples},
		{"cgroup_correlation.moved_out_tasks", h.CgroupCorrelation.MovedOutTasks, st.MovedOut},
		{"cgroup_correlation.moved_out_examples", h.CgroupCorrelation.MovedOutExamples, st.MovedOutExamples},
		{"cgroup_correlation.joined_tasks", h.CgroupCorrelation.JoinedTasks, st.Joined},
		{"cgroup_correlation.joined_examples", h.CgroupCorrelation.JoinedExamples, st.JoinedExamples},
	}
	for _, c := range taskChecks {
		if !sameJSON(c.got, c.want) {
			return entryErr(EntryHealth, "%s is %s but %s derives %s", c.field, compact(c.got), EntryKernel, compact(c.want))
		}
	}
	if bad := coverageProbeMismatch(h.Coverage, h.Probes); bad != "" {
		return entryErr(EntryHealth, "coverage: %s", bad)
	}
	if h.KernelLayer.Status == wire.LayerAbsent && d.Events() > 0 {
		return entryErr(EntryHealth, "kernel_layer is absent but %s has %d events", EntryKernel, d.Events())
	}
	if h.SDKLayer.Events != len(b.SDK) {
		return entryErr(EntryHealth, "sdk_layer.events is %d but %s has %d lines", h.SDKLayer.Events, EntrySDK, len(b.SDK))
	}
	want := BuildHealth(h.RunID, InputOf(*h))
	checks := []struct {
		field     string
		got, want any
	}{
		{"ringbuf_drops.total", h.RingbufDrops.Total, want.RingbufDrops.Total},
		{"decode_detail", h.DecodeDetail, want.DecodeDetail},
		{"cgroup_correlation.status", h.CgroupCorrelation.Status, want.CgroupCorrelation.Status},
		{"cgroup_correlation.reasons", h.CgroupCorrelation.Reasons, want.CgroupCorrelation.Reasons},
		{"kernel_layer.status", h.KernelLayer.Status, want.KernelLayer.Status},
		{"kernel_layer.reasons", h.KernelLayer.Reasons, want.KernelLayer.Reasons},
		{"sdk_layer.status", h.SDKLayer.Status, want.SDKLayer.Status},
		{"probes", h.Probes, want.Probes},
		{"coverage", h.Coverage, want.Coverage},
	}
	for _, c := range checks {
		if !sameJSON(c.got, c.want) {
			why := ""
			if c.field == "kernel_layer.status" || c.field == "cgroup_correlation.status" {
				reasons := want.KernelLayer.Reasons
				if c.field == "cgroup_correlation.status" {
					reasons = want.CgroupCorrelation.Reasons
				}
				if len(reasons) > 0 {
					why = " (" + strings.Join(reasons, "; ") + ")"
				}
			}
			return entryErr(EntryHealth, "%s is %s but the recorded inputs imply %s%s", c.field, compact(c.got), compact(c.want), why)
		}
	}
	return nil
}

func checkSDK(b *Bundle) error {
	status := b.Health.SDKLayer.Status
	switch {
	case len(b.SDK) == 0 && b.Correlation != nil:
		return entryErr(EntryCorrelation, "present without %s", EntrySDK)
	case len(b.SDK) > 0 && b.Correlation == nil:
		return entryErr(EntrySDK, "present without %s", EntryCorrelation)
	case status == wire.SDKComplete && len(b.SDK) == 0:
		return entryErr(EntryHealth, "sdk_layer is complete but there is no %s", EntrySDK)
	case status == wire.SDKAbsent && len(b.SDK) > 0:
		return entryErr(EntryHealth, "sdk_layer is absent but %s has %d events", EntrySDK, len(b.SDK))
	}
	if status != wire.SDKComplete {
		return nil
	}
	var buf bytes.Buffer
	for i := range b.SDK {
		line, _ := json.Marshal(&b.SDK[i])
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, problems := ReadSDKLog(&buf, b.Run.RunID); len(problems) > 0 {
		return entryErr(EntrySDK, "health calls the SDK layer complete but: %s", problems[0])
	}
	return nil
}

// firstDiff names the first top-level JSON field in which a and b differ,
// or returns "" when their encodings are identical.
func firstDiff(a, b any) string {
	// Cheap path for the usual case; JSON comparison settles the rest
	// (nil and empty slices encode alike).
	if reflect.DeepEqual(a, b) {
		return ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return ""
	}
	v := reflect.Indirect(reflect.ValueOf(a))
	w := reflect.Indirect(reflect.ValueOf(b))
	for i := 0; i < v.NumField(); i++ {
		name := strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0]
		if !sameJSON(v.Field(i).Interface(), w.Field(i).Interface()) {
			return name
		}
	}
	return "content"
}

// firstSurfaceDiff is firstDiff of d's surface, with run id id, and s:
// each path list is compared a path at a time as d gives it (back from
// its scratch store, if it moved them there), never built whole.
func firstSurfaceDiff(d *Digest, s *CapabilitySurface, id string) (string, error) {
	derived := d.SurfaceWithoutPaths()
	derived.RunID = id
	lists := s.pathFields()
	eps := s.endpointFields()
	v, w := reflect.ValueOf(&derived).Elem(), reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0]
		var same bool
		var err error
		switch f := w.Field(i).Addr().Interface().(type) {
		case *[]wire.Bytes:
			if l := slices.Index(lists[:], f); l >= 0 {
				same, err = sameAsStored(*f, func(emit func(wire.Bytes) error) error {
					return d.EachSurfacePath(PathList(l), emit)
				}, func(a, b wire.Bytes) bool { return a == b })
				break
			}
			same = sameJSON(v.Field(i).Interface(), w.Field(i).Interface())
		case *[]Rename:
			same, err = sameAsStored(*f, d.EachSurfaceRename, func(a, b Rename) bool { return a == b })
		case *[]Endpoint:
			if l := slices.Index(eps[:], f); l >= 0 {
				same, err = sameAsStored(*f, func(emit func(Endpoint) error) error {
					return d.EachSurfaceEndpoint(EndpointList(l), emit)
				}, func(a, b Endpoint) bool { return a == b })
				break
			}
			same = sameJSON(v.Field(i).Interface(), w.Field(i).Interface())
		default:
			same = sameJSON(v.Field(i).Interface(), w.Field(i).Interface())
		}
		if err != nil || !same {
			return name, err
		}
	}
	return "", nil
}

// errDiffers stops a comparison at its first difference.
var errDiffers = errors.New("differs")

// sameAsStored reports whether list is the list each gives (which is
// never nil: an empty one is [], not null).
func sameAsStored[T any](list []T, each func(emit func(T) error) error, equal func(a, b T) bool) (bool, error) {
	if list == nil {
		return false, nil
	}
	i := 0
	err := each(func(x T) error {
		if i >= len(list) || !equal(list[i], x) {
			return errDiffers
		}
		i++
		return nil
	})
	if err == errDiffers {
		return false, nil
	}
	return err == nil && i == len(list), err
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func compact(v any) string {
	j, _ := json.Marshal(v)
	const max = 200
	if len(j) > max {
		return string(j[:max]) + "..."
	}
	return string(j)
}

func sortedKinds(ms ...map[wire.Kind]uint64) []wire.Kind {
	seen := map[wire.Kind]bool{}
	var out []wire.Kind
	for _, k := range wire.Kinds {
		seen[k] = true
		out = append(out, k)
	}
	var extra []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				extra = append(extra, string(k))
			}
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, wire.Kind(k))
	}
	return out
}

// checkExit holds run.json's exit status against the kernel's: the last
// group-ending exit of the run's first task (the one cloned into the
// session). Without both events in the kernel layer there is nothing to
// compare.
func checkExit(b *Bundle, d *Digest) error {
	last := d.exit.last
	if last == nil {
		return nil
	}
	code, sig := int(last.Code), int(last.Signal)
	if sig != 0 {
		code = 128 + sig
	}
	if b.Run.ExitCode != code || b.Run.Signal != sig {
		return entryErr(EntryRun, "exit_code %d, signal %d, but %s has the command exit with %d, signal %d", b.Run.ExitCode, b.Run.Signal, EntryKernel, code, sig)
	}
	return nil
}

// checkReadFaults compares health's read faults with the events that say
// they lack a part. Health v2 predates events saying so: its read_faults
// came from the capture alone, and none of its events may name a part.
func checkReadFaults(h *wire.Health, d *Digest) error {
	n, parts := d.Incomplete()
	if h.Schema == wire.HealthSchemaV2 {
		if n > 0 {
			return entryErr(EntryHealth, "schema is %s, which predates events naming the parts they lack, but %d %s events name some", h.Schema, n, EntryKernel)
		}
		if h.IncompleteParts != nil {
			return entryErr(EntryHealth, "schema is %s, which has no incomplete_parts", h.Schema)
		}
		return nil
	}
	if d.firstDefect != "" {
		return entryErr(EntryKernel, "%s", d.firstDefect)
	}
	if h.ReadFaults != n {
		return entryErr(EntryHealth, "read_faults is %d but %d %s events lack a part", h.ReadFaults, n, EntryKernel)
	}
	if !maps.Equal(h.IncompleteParts, parts) {
		got, want := "absent", "none"
		if h.IncompleteParts != nil {
			got = compact(h.IncompleteParts)
		}
		if parts != nil {
			want = compact(parts)
		}
		return entryErr(EntryHealth, "incomplete_parts is %s but %s derives %s", got, EntryKernel, want)
	}
	return nil
}
