//go:build linux

package runner

import (
	"vigil/internal/archive"
	"vigil/internal/attest"
	"vigil/internal/evidence"
)

// archiveWriter is the reproducible archive format of package archive,
// signed with key when it is set.
func archiveWriter(key *attest.Key) ArchiveWriter {
	return func(path string, b *evidence.Bundle, layer *archive.KernelLayer) error {
		return archive.WriteStreamed(path, b, layer, key)
	}
}
