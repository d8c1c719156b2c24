package report

import (
	"vigil/internal/wire"
)

// kernelFidelity summarizes the kernel calibration of every non-warm-up
// A/C sample of a cell, valid or not: a failed calibration is what makes a
// sample invalid, so counting only valid ones would hide it.
func kernelFidelity(r *run, cell wire.Cell) *wire.KernelFidelity {
	k := &wire.KernelFidelity{ExpectedWrite: cell.KernelEvents, ExpectedRead: cell.KernelEvents}
	first := true
	for i := range r.samples {
		s := &r.samples[i]
		if s.Cell != cell.Name || excluded(s) || (s.ArmKind != wire.ArmA && s.ArmKind != wire.ArmC) {
			continue
		}
		k.Samples++
		if s.Health != nil {
			k.RingbufDrops += s.Health.RingbufDrops
			if s.Health.KernelLayer == wire.LayerComplete {
				k.KernelComplete++
			}
			if s.Health.CgroupCorrelation == wire.CorrelationClean {
				k.CgroupClean++
			}
		}
		if s.Calibration.KernelMatch == nil {
			continue
		}
		k.Evaluated++
		if *s.Calibration.KernelMatch {
			k.Matched++
		}
		if s.Calibration.KernelExpectedOpens > 0 {
			k.ExpectedWrite = s.Calibration.KernelExpectedOpens / 2
			k.ExpectedRead = s.Calibration.KernelExpectedOpens - k.ExpectedWrite
		}
		w, rd := s.Calibration.KernelWriteOpens, s.Calibration.KernelReadOpens
		if first {
			k.ObservedWriteMin, k.ObservedWriteMax, k.ObservedReadMin, k.ObservedReadMax = w, w, rd, rd
			first = false
		}
		k.ObservedWriteMin = min(k.ObservedWriteMin, w)
		k.ObservedWriteMax = max(k.ObservedWriteMax, w)
		k.ObservedReadMin = min(k.ObservedReadMin, rd)
		k.ObservedReadMax = max(k.ObservedReadMax, rd)
	}
	if k.Samples == 0 {
		return nil
	}
	k.AllMatched = k.Evaluated == k.Samples && k.Matched == k.Samples
	k.Healthy = k.AllMatched && k.RingbufDrops == 0 && k.KernelComplete == k.Samples && k.CgroupClean == k.Samples
	return k
}

// spanFidelity summarizes span retention of the non-warm-up B/C samples
// of a cell that requested span events. A sample without span numbers
// (span_match absent: no agent result, e.g. a timeout or crash, or a
// user command) says nothing about what the SDK kept; it is left out of
// the ranges and named in the text.
func spanFidelity(r *run, cell wire.Cell) *wire.SpanFidelity {
	f := &wire.SpanFidelity{Requested: cell.SpanEvents}
	ends := map[wire.DroppedEnd]int{}
	first := true
	noData := 0
	for i := range r.samples {
		s := &r.samples[i]
		if s.Cell != cell.Name || excluded(s) || (s.ArmKind != wire.ArmB && s.ArmKind != wire.ArmC) {
			continue
		}
		c := s.Calibration
		if c.SpanRequested == 0 && cell.SpanEvents == 0 {
			continue
		}
		if c.SpanMatch == nil {
			noData++
			continue
		}
		f.Samples++
		if c.SpanRequested > 0 {
			f.Requested = c.SpanRequested
		}
		if c.SpanLimit > 0 {
			f.Limit = c.SpanLimit
		}
		if first {
			f.RetainedMin, f.RetainedMax, f.DroppedMin, f.DroppedMax = c.SpanRetained, c.SpanRetained, c.SpanDropped, c.SpanDropped
			first = false
		}
		f.RetainedMin = min(f.RetainedMin, c.SpanRetained)
		f.RetainedMax = max(f.RetainedMax, c.SpanRetained)
		f.DroppedMin = min(f.DroppedMin, c.SpanDropped)
		f.DroppedMax = max(f.DroppedMax, c.SpanDropped)
		ends[droppedEnd(c)]++
	}
	if f.Samples == 0 {
		return nil
	}
	switch len(ends) {
	case 1:
		for e := range ends {
			f.DroppedEnd = e
		}
	default:
		f.DroppedEnd = wire.DroppedMixed
	}
	f.Clipped = f.DroppedMax > 0 || f.RetainedMin < f.Requested
	f.WithoutSpanData = noData
	return f
}

// droppedEnd classifies which events survived from the retained index range.
func droppedEnd(c wire.Calibration) wire.DroppedEnd {
	switch {
	case c.SpanRetained >= c.SpanRequested && c.SpanDropped == 0:
		return wire.DroppedNone
	case c.SpanRetained == 0:
		return wire.DroppedAll
	case c.RetainedLastIndex == c.SpanRequested-1 && c.RetainedFirstIndex == c.SpanRequested-c.SpanRetained:
		return wire.DroppedOldest
	case c.RetainedFirstIndex == 0 && c.RetainedLastIndex == c.SpanRetained-1:
		return wire.DroppedNewest
	}
	return wire.DroppedMixed
}
