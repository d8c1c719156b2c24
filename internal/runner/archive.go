package runner

import (
	"vigil/internal/archive"
	"vigil/internal/evidence"
)

// defaultArchiveWriter is the reproducible archive format of package
// archive.
func defaultArchiveWriter(path string, b *evidence.Bundle) error {
	return archive.Write(path, b)
}
