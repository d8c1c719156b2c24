package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// requiredEntries must be present in every archive.
var requiredEntries = []string{evidence.EntryRun, evidence.EntryKernel, evidence.EntrySurface, evidence.EntryHealth}

// parseManifest checks the manifest entry and, before anything else is
// inflated, that the sizes it declares are within the limits.
func parseManifest(mf file) (*Manifest, error) {
	if err := validate(mf); err != nil {
		return nil, err
	}
	var m Manifest
	if err := strictJSON(mf.data, &m); err != nil {
		return nil, entryErr(mf.path, "%v", err)
	}
	if err := canonical(mf)(marshalDoc(&m)); err != nil {
		return nil, err
	}
	total := int64(len(mf.data))
	listed := map[string]bool{}
	for i, e := range m.Entries {
		if listed[e.Path] {
			return nil, entryErr(mf.path, "lists %s twice", e.Path)
		}
		if i > 0 && e.Path < m.Entries[i-1].Path {
			return nil, entryErr(mf.path, "entries not sorted (%s after %s)", e.Path, m.Entries[i-1].Path)
		}
		listed[e.Path] = true
		if e.Bytes > limits.entry {
			return nil, entryErr(mf.path, "declares %s at %d bytes, over the limit of %d", e.Path, e.Bytes, limits.entry)
		}
		if total += e.Bytes; total > limits.total {
			return nil, entryErr(mf.path, "declares more than the limit of %d bytes in all", limits.total)
		}
	}
	return &m, nil
}

// decodeFiles checks the manifest m (read from files[0] by parseManifest)
// against the entries, validates and decodes each entry, and checks
// cross-file consistency.
func decodeFiles(m *Manifest, files []file) (*Archive, error) {
	mf := files[0]
	content := map[string]file{}
	for _, f := range files[1:] {
		content[f.path] = f
	}
	listed := map[string]bool{}
	for _, e := range m.Entries {
		listed[e.Path] = true
		f, ok := content[e.Path]
		if !ok {
			return nil, entryErr(e.Path, "listed in %s but missing from the archive", mf.path)
		}
		if f.size() != e.Bytes {
			return nil, entryErr(e.Path, "%d bytes but %s says %d", f.size(), mf.path, e.Bytes)
		}
		if f.sum == nil {
			sum := sha256.Sum256(f.data)
			f.sum = &sum
		}
		if got := hex.EncodeToString(f.sum[:]); got != e.SHA256 {
			return nil, entryErr(e.Path, "content sha256 %s does not match %s's %s", got, mf.path, e.SHA256)
		}
	}
	var sig *attest.Signed
	for _, f := range files[1:] {
		if f.path == evidence.EntrySignature {
			if err := validate(f); err != nil {
				return nil, err
			}
			var err error
			if sig, err = checkSignature(f, mf, m); err != nil {
				return nil, err
			}
			continue
		}
		if !listed[f.path] {
			return nil, entryErr(f.path, "not listed in %s", mf.path)
		}
	}
	for _, p := range requiredEntries {
		if !listed[p] {
			return nil, entryErr(p, "missing (required in every archive)")
		}
	}
	// The kernel layer was decoded, line by line, as it was read. The
	// capability surface is what the layer derives: when the entry is
	// byte for byte the canonical encoding of that derivation, it is that
	// document, and schema validation, decoding and the consistency check
	// cannot find more (it only ever differs in a tampered archive, which
	// takes the long way and gets the precise error).
	var kernel []wire.Kernel
	var digest *evidence.Digest
	for _, f := range files[1:] {
		if f.path == evidence.EntryKernel {
			kernel, digest = f.kernel, f.digest
		}
	}
	var surface evidence.CapabilitySurface
	var derived bool
	i := slices.IndexFunc(files, func(f file) bool { return f.path == evidence.EntrySurface })
	switch {
	case i < 0:
	case digest != nil:
		// Folded (OpenDigest): the digest's paths may be in a scratch
		// file, and so may the entry's text; compared by hash, neither
		// is ever held, and on a match the digest gives the paths.
		var err error
		if surface, derived, err = digestSurface(files, files[i], digest); err != nil {
			return nil, err
		}
	default:
		surface, derived = derivedSurface(files, kernel)
	}
	if !derived && i >= 0 {
		// The long way needs the text.
		if err := files[i].load(); err != nil {
			return nil, err
		}
	}
	for _, f := range files[1:] {
		if f.checked || f.path == evidence.EntrySignature || (derived && f.path == evidence.EntrySurface) {
			continue
		}
		if err := validate(f); err != nil {
			return nil, err
		}
	}

	b := &evidence.Bundle{}
	var err error
	if err = decodeDoc(files, evidence.EntryRun, &b.Run); err != nil {
		return nil, err
	}
	if digest != nil {
		b.Streamed = digest
	} else if kernel != nil {
		b.Kernel = kernel
	} else if b.Kernel, err = decodeLines[wire.Kernel](files, evidence.EntryKernel); err != nil {
		return nil, err
	}
	if b.SDK, err = decodeLines[wire.SDK](files, evidence.EntrySDK); err != nil {
		return nil, err
	}
	if derived {
		b.Surface = surface
	} else if err = decodeDoc(files, evidence.EntrySurface, &b.Surface); err != nil {
		return nil, err
	}
	if derived && digest != nil {
		b.SetSurfacePathSource(digest)
	}
	if _, ok := content[evidence.EntryCorrelation]; ok {
		b.Correlation = &evidence.CorrelationReport{}
		if err = decodeDoc(files, evidence.EntryCorrelation, b.Correlation); err != nil {
			return nil, err
		}
	}
	if err = decodeDoc(files, evidence.EntryHealth, &b.Health); err != nil {
		return nil, err
	}
	if m.RunID != b.Run.RunID {
		return nil, entryErr(mf.path, "run_id %q differs from %s's %q", m.RunID, evidence.EntryRun, b.Run.RunID)
	}
	if m.VigilVersion != b.Run.VigilVersion {
		return nil, entryErr(mf.path, "vigil_version %q differs from %s's %q", m.VigilVersion, evidence.EntryRun, b.Run.VigilVersion)
	}
	check := evidence.Check
	if derived && digest == nil {
		check = evidence.CheckDerivedSurface
	}
	if err := check(b); err != nil {
		return nil, err
	}
	return &Archive{Bundle: b, Signature: sig}, nil
}

// lenientRunID is run.json's run id, read leniently (run.json is
// validated and decoded strictly in any case); false without one.
func lenientRunID(files []file) (string, bool) {
	rf, ok := find(files, evidence.EntryRun)
	if !ok {
		return "", false
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if json.Unmarshal(rf.data, &run) != nil || run.RunID == "" {
		return "", false
	}
	return run.RunID, true
}

// derivedSurface derives the capability surface from kernel, under the
// run id run.json holds (read leniently here: run.json is validated and
// decoded strictly in any case), and reports whether the archive's surface
// entry is exactly its canonical encoding. Without a run id it never
// matches (Check refuses an empty one).
func derivedSurface(files []file, kernel []wire.Kernel) (evidence.CapabilitySurface, bool) {
	f, ok := find(files, evidence.EntrySurface)
	runID, rok := lenientRunID(files)
	if !ok || !rok {
		return evidence.CapabilitySurface{}, false
	}
	s := evidence.BuildSurface(kernel)
	s.RunID = runID
	if !sameSurface(&s, f.data) {
		return evidence.CapabilitySurface{}, false
	}
	return s, true
}

// digestSurface is derivedSurface for a kernel layer folded into digest
// d, whose paths may be in a scratch file, as the entry's text f may be:
// the canonical encoding of what d derives is hashed as it is made, a
// path at a time, and compared with the entry's hash. On a match, the
// surface is returned without its lists (d gives them). The error
// is a failure to read d's scratch store back, not a defect of the
// archive.
func digestSurface(files []file, f file, d *evidence.Digest) (evidence.CapabilitySurface, bool, error) {
	runID, ok := lenientRunID(files)
	if !ok {
		return evidence.CapabilitySurface{}, false, nil
	}
	s := d.SurfaceWithoutPaths()
	s.RunID = runID
	h := sha256.New()
	var n int64
	err := surfaceChunks(&s, d, make([]byte, 0, 2*surfaceChunk), func(p []byte) []byte {
		h.Write(p)
		n += int64(len(p))
		return p[:0]
	})
	if err != nil {
		return evidence.CapabilitySurface{}, false, err
	}
	if n != f.n || !bytes.Equal(h.Sum(nil), f.sum[:]) {
		return evidence.CapabilitySurface{}, false, nil
	}
	return s, true, nil
}

func validate(f file) error {
	name := evidence.EntrySchemas[f.path]
	var err error
	if strings.HasSuffix(f.path, ".ndjson") {
		err = validateLines(name, f.data, nil)
	} else {
		err = wire.Validate(name, f.data)
	}
	if err != nil {
		return entryErr(f.path, "schema %s: %v", name, err)
	}
	return nil
}

// validateLines is wire.ValidateNDJSON spread over the CPUs: schema
// validation dominates verification time, and lines are independent.
// The error names the first failing line, as the sequential check would.
// prove, when set, may vouch for a line (it gets scratch space to
// reuse); the validator checks the rest.
func validateLines(name string, data []byte, prove func(i int, line []byte, s *proveScratch) bool) error {
	return validateLinesOf(name, splitLines(data), prove)
}

func splitLines(data []byte) [][]byte {
	lines := make([][]byte, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines, data = append(lines, data), nil
		} else {
			lines, data = append(lines, data[:i]), data[i+1:]
		}
	}
	return lines
}

func validateLinesOf(name string, lines [][]byte, prove func(i int, line []byte, s *proveScratch) bool) error {
	workers := min(runtime.GOMAXPROCS(0), 1+len(lines)/1024)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch proveScratch
			// Interleaved chunks of 256 lines keep the workers even.
			for start := w * 256; start < len(lines); start += workers * 256 {
				for i := start; i < min(start+256, len(lines)); i++ {
					if errs[w] != nil {
						return
					}
					if prove != nil {
						if prove(i, lines[i], &scratch) {
							continue
						}
					}
					if len(bytes.TrimSpace(lines[i])) == 0 {
						errs[w] = lineError{i + 1, "empty line"}
					} else if err := wire.Validate(name, lines[i]); err != nil {
						errs[w] = lineError{i + 1, err.Error()}
					}
				}
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if le, ok := err.(lineError); ok && (first == nil || le.line < first.(lineError).line) {
			first = err
		}
	}
	return first
}

type lineError struct {
	line int
	msg  string
}

func (e lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func find(files []file, path string) (file, bool) {
	for _, f := range files {
		if f.path == path {
			return f, true
		}
	}
	return file{}, false
}

func decodeDoc[T any](files []file, path string, v *T) error {
	return decodeDocWith(files, path, v, func(v *T) ([]byte, error) { return marshalDoc(v) })
}

// decodeDocWith is decodeDoc with enc as the canonical encoding.
func decodeDocWith[T any](files []file, path string, v *T, enc func(*T) ([]byte, error)) error {
	f, ok := find(files, path)
	if !ok {
		return entryErr(path, "missing")
	}
	if err := strictJSON(f.data, v); err != nil {
		return entryErr(path, "%v", err)
	}
	return canonical(f)(enc(v))
}

// decodeLines decodes an NDJSON entry; a missing entry decodes to nil.
func decodeLines[T any](files []file, path string) ([]T, error) {
	f, ok := find(files, path)
	if !ok {
		return nil, nil
	}
	var out []T
	dec := json.NewDecoder(bytes.NewReader(f.data))
	dec.DisallowUnknownFields()
	for line := 1; ; line++ {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			return nil, entryErr(path, "line %d: %v", line, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 && path == evidence.EntrySDK {
		return nil, entryErr(path, "present but empty")
	}
	if k, ok := any(out).([]wire.Kernel); ok {
		return out, canonical(f)(marshalKernel(k))
	}
	return out, canonical(f)(marshalLines(out))
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON document")
	}
	return nil
}

// canonical requires that f re-encodes to exactly its bytes, which rules
// out duplicate keys, reordered fields and any other second spelling of
// the same content.
// It is used as canonical(f)(marshalDoc(v)).
func canonical(f file) func(again []byte, err error) error {
	return func(again []byte, err error) error {
		if err != nil {
			return entryErr(f.path, "re-encoding: %v", err)
		}
		if !bytes.Equal(again, f.data) {
			return entryErr(f.path, "not in canonical encoding (%s)", firstByteDiff(f.data, again))
		}
		return nil
	}
}

func firstByteDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("differs from its canonical form at byte %d", i)
}
