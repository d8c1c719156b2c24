//go:build linux

package bench

import (
	"fmt"
	"strings"

	"vigil/internal/archive"
	"vigil/internal/wire"
)

// archiveFacts is what the harness takes from one sample's archive.
type archiveFacts struct {
	ExtractedBytes int64
	Health         wire.Health
	// Opens under the worker directory, by access mode.
	WriteOpens, ReadOpens, ReadWriteOpens int
	// FailedOpens are worker-file opens that returned an error.
	FailedOpens int
}

// readArchive verifies and decodes a vigil archive (archive.Read: hashes,
// schemas, cross-file consistency), takes its observation health, counts
// successful opens of paths under workerDir by access mode, and sums the
// extracted size of its entries. Paths are matched as the caller gave them,
// so the workload must use absolute worker paths (vigil agent does).
func readArchive(path, workerDir string) (archiveFacts, error) {
	var f archiveFacts
	b, size, err := archive.ReadSized(path)
	if err != nil {
		return f, fmt.Errorf("archive fails verification: %v", err)
	}
	f.ExtractedBytes = size
	f.Health = b.Health
	if workerDir != "" {
		countOpens(b.Kernel, strings.TrimSuffix(workerDir, "/")+"/", &f)
	}
	return f, nil
}

func countOpens(events []wire.Kernel, prefix string, f *archiveFacts) {
	for _, ev := range events {
		if ev.Kind != wire.KindOpen || ev.Open == nil {
			continue
		}
		if !strings.HasPrefix(string(ev.Open.Path()), prefix) {
			continue
		}
		if ev.Open.Ret < 0 {
			f.FailedOpens++
			continue
		}
		switch ev.Open.Access {
		case wire.AccessWrite:
			f.WriteOpens++
		case wire.AccessRead:
			f.ReadOpens++
		case wire.AccessReadWrite:
			f.ReadWriteOpens++
		}
	}
}
