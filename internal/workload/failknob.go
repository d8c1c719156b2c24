package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Environment equivalents of --fail-every and --fail-counter-file.
const (
	EnvFailEvery       = "VIGIL_AGENT_FAIL_EVERY"
	EnvFailCounterFile = "VIGIL_AGENT_FAIL_COUNTER_FILE"
)

// countInvocation increments the invocation counter in path (created at 0
// if missing) under an exclusive lock and returns the new count, so
// concurrent invocations each get their own number.
func countInvocation(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := lockExclusive(f); err != nil {
		return 0, err
	}
	buf := make([]byte, 32)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	count := 0
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		if count, err = strconv.Atoi(s); err != nil || count < 0 {
			return 0, fmt.Errorf("%s holds %q, not an invocation count", path, s)
		}
	}
	count++
	if err := f.Truncate(0); err != nil {
		return 0, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(count)+"\n"), 0); err != nil {
		return 0, err
	}
	return count, nil
}
