package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"

	"vigil/internal/evidence"
)

// marshalEntries encodes every entry of b, manifest first, the rest
// sorted, each in one piece.
func marshalEntries(b *evidence.Bundle) ([]file, error) {
	files, err := marshalBodyWithKernel(b)
	if err != nil {
		return nil, err
	}
	mf, err := manifestFor(b, files)
	if err != nil {
		return nil, err
	}
	return append([]file{mf}, files...), nil
}

// marshalBodyWithKernel is marshalBody with the kernel layer and the
// capability surface encoded too.
func marshalBodyWithKernel(b *evidence.Bundle) ([]file, error) {
	files, err := marshalBody(b)
	if err != nil {
		return nil, err
	}
	k, _ := marshalKernel(b.Kernel)
	files = append(files, file{path: evidence.EntryKernel, data: k}, file{path: evidence.EntrySurface, data: appendSurface(nil, &b.Surface)})
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

// manifestFor is the manifest of the body entries files.
func manifestFor(b *evidence.Bundle, files []file) (file, error) {
	entries := make([]ManifestEntry, len(files))
	// The kernel layer dominates; hashing the entries side by side keeps
	// the manifest off the critical path.
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			h.Write(f.data)
			entries[i] = ManifestEntry{Path: f.path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: f.size()}
		}()
	}
	wg.Wait()
	return manifestOf(b, entries)
}
