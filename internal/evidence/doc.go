// Package evidence is the document model of a vigil evidence archive and the
// pure functions that derive its documents: observation health from the
// runner's counters, the capability surface and the tool-call correlation
// from the recorded events, and strict ingestion of the workload's SDK log.
//
// Nothing here touches the file system; package archive turns a Bundle
// into bytes and back, and gives the Digest of a recording or a
// verification the scratch store it moves its paths and time index to
// (SpillTo). Every derived document can be recomputed from the others,
// which is what Check relies on to catch an archive whose parts disagree.
// What derives from the kernel layer goes through one fold (Digest), fed
// either the whole layer or its events a block at a time as a recording
// or a verification reads them.
package evidence

// Schema ids carried in the "schema" field of each document.
const (
	ManifestSchema    = "vigil.manifest/v2"
	SurfaceSchema     = "vigil.capability-surface/v2"
	CorrelationSchema = "vigil.correlation-report/v1"
)
