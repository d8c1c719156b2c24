package wire

// Coverage is what a capture declares it observes on its host: the
// operation classes it covers, each with the hook it comes from and
// whether that hook attached, and the classes it does not cover, each with
// why. A kernel layer is complete relative to this declaration: a covered
// class whose hook did not attach makes it partial, and an uncovered class
// is never silently absent: it is listed here.
type Coverage struct {
	Covered    []CoveredClass   `json:"covered"`
	NotCovered []UncoveredClass `json:"not_covered"`
}

// CoveredClass is one operation class the capture records.
type CoveredClass struct {
	Class    string `json:"class"`
	Hook     string `json:"hook"`
	Attached bool   `json:"attached"`
	// Source says where the recorded facts come from (the kernel's own
	// objects, or the caller's memory) and what is left out.
	Source string `json:"source"`
}

// UncoveredIOUringUntraced is the uncovered class of a host where io_uring
// completions are recorded but those not recorded (skipped, overflowed,
// posted by a task not the run's) cannot be counted (kernels before about
// 6.3 lack io_uring_submit_req).
const UncoveredIOUringUntraced = "io_uring_untraced"

// UncoveredClass is one operation class the capture does not record.
type UncoveredClass struct {
	Class string `json:"class"`
	Why   string `json:"why"`
}
