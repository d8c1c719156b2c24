//go:build linux

package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mount is one mounted cgroup hierarchy, as /proc/PID/mountinfo lists it.
type Mount struct {
	Root    string   // the path inside the hierarchy that is mounted
	Point   string   // where it is mounted
	FSType  string   // "cgroup" (v1) or "cgroup2"
	Options []string // super options; for v1 they name its controllers
}

// Has reports whether a v1 hierarchy carries controller.
func (m Mount) Has(controller string) bool {
	if m.FSType != "cgroup" {
		return false
	}
	for _, o := range m.Options {
		if o == controller {
			return true
		}
	}
	return false
}

// Dir is the directory of the cgroup at cgPath (as /proc/PID/cgroup
// names it) below this mount.
func (m Mount) Dir(cgPath string) string {
	rel := cgPath
	if m.Root != "/" {
		rel = strings.TrimPrefix(cgPath, m.Root)
	}
	return filepath.Join(m.Point, rel)
}

// ReadMounts returns the cgroup and cgroup2 entries of a mountinfo file.
func ReadMounts(path string) ([]Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER"
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 || (rf[0] != "cgroup" && rf[0] != "cgroup2") {
			continue
		}
		out = append(out, Mount{Root: unescapeMount(lf[3]), Point: unescapeMount(lf[4]), FSType: rf[0], Options: strings.Split(rf[2], ",")})
	}
	return out, sc.Err()
}

// ReadMemberships maps each hierarchy's controller list ("" for v2, e.g.
// "pids" or "cpu,cpuacct" for v1) to the cgroup path a /proc/PID/cgroup
// file names in it.
func ReadMemberships(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 {
			out[parts[1]] = parts[2]
		}
	}
	return out, nil
}

// ErrNoV1 is returned by OwnV1Dir when no v1 hierarchy carries the
// controller (always so on a pure cgroup v2 host).
var ErrNoV1 = errors.New("no cgroup v1 hierarchy carries it")

// OwnV1Dir returns the calling process's own directory in the cgroup v1
// hierarchy that carries controller.
func OwnV1Dir(controller string) (string, error) {
	mounts, members, err := ReadSelf()
	if err != nil {
		return "", err
	}
	return V1Dir(mounts, members, controller)
}

// V1Dir is the directory, below its mount, of the cgroup v1 membership
// whose hierarchy carries controller.
func V1Dir(mounts []Mount, members map[string]string, controller string) (string, error) {
	cgPath, found := "", false
	for ctls, p := range members {
		for _, c := range strings.Split(ctls, ",") {
			if c == controller {
				cgPath, found = p, true
			}
		}
	}
	if !found {
		return "", fmt.Errorf("%s controller: %w", controller, ErrNoV1)
	}
	for _, m := range mounts {
		if m.Has(controller) {
			return m.Dir(cgPath), nil
		}
	}
	return "", fmt.Errorf("%s controller: the process is in a v1 hierarchy that is not mounted here", controller)
}

// SessionOwner returns the pid of the vigil process that named a cgroup
// directory with SessionName, or ok=false when name is not such a name.
func SessionOwner(name string) (pid int, ok bool) { return parseSessionName(name) }

// Alive reports whether a process with this pid exists.
func Alive(pid int) bool { return alive(pid) }
