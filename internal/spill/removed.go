package spill

import (
	"fmt"
	"os"
	"regexp"
)

// NamePattern matches the name a scratch file has for a moment on a file
// system without O_TMPFILE, its first group the pid of the process that
// made it: a process killed in that moment leaves one, which a later
// process removes (once that pid is gone).
var NamePattern = regexp.MustCompile(`^\.vigil-spill-([0-9]+)-`)

// createRemoved creates a named file and removes its name at once: from
// then on it is anonymous, as an O_TMPFILE file is from the start.
func createRemoved(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf(".vigil-spill-%d-*", os.Getpid()))
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}
