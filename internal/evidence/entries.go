package evidence

import "fmt"

// Archive entry paths. manifest.json comes first; the others follow in
// byte order of their paths.
const (
	EntryManifest    = "manifest.json"
	EntryRun         = "run.json"
	EntryKernel      = "layers/kernel.ndjson"
	EntrySDK         = "layers/sdk.ndjson"
	EntrySurface     = "capability-surface.json"
	EntryCorrelation = "correlation-report.json"
	EntryHealth      = "observation-health.json"
	// EntrySignature, when present, is the last entry and the only one
	// manifest.json does not list: it signs manifest.json.
	EntrySignature = "signature.dsse.json"
)

// EntrySchemas maps every entry an archive may hold to the name of the
// schema (package schema) its content validates against; .ndjson entries
// validate line by line.
var EntrySchemas = map[string]string{
	EntryManifest:    "manifest",
	EntryRun:         "run",
	EntryKernel:      "kernel-event",
	EntrySDK:         "sdk-event",
	EntrySurface:     "capability-surface",
	EntryCorrelation: "correlation-report",
	EntryHealth:      "observation-health",
	EntrySignature:   "signature",
}

// EntryError is a defect in one archive entry. Entry is empty for defects
// of the archive as a whole (its compression or tar structure).
type EntryError struct {
	Entry  string
	Reason string
}

func (e *EntryError) Error() string {
	if e.Entry == "" {
		return e.Reason
	}
	return e.Entry + ": " + e.Reason
}

func entryErr(entry, format string, args ...any) error {
	return &EntryError{Entry: entry, Reason: fmt.Sprintf(format, args...)}
}
