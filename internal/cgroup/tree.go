//go:build linux

package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// dirs returns root and every cgroup below it, parents before children.
func dirs(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// A sub-cgroup removed while walking is not an error.
			if errors.Is(err, fs.ErrNotExist) && p != root {
				return nil
			}
			return err
		}
		if d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// Procs returns the pids listed in dir/cgroup.procs (v1 or v2).
func Procs(dir string) ([]int, error) { return readProcs(dir) }

// readProcs returns the pids listed in dir/cgroup.procs.
func readProcs(dir string) ([]int, error) {
	f, err := os.Open(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		pid, err := strconv.Atoi(line)
		if err != nil {
			return nil, fmt.Errorf("%s/cgroup.procs: bad pid %q", dir, line)
		}
		pids = append(pids, pid)
	}
	return pids, sc.Err()
}

// TreeProcs returns the pids of every process in root and its sub-cgroups.
func TreeProcs(root string) ([]int, error) {
	ds, err := dirs(root)
	if err != nil {
		return nil, err
	}
	var all []int
	for _, d := range ds {
		pids, err := readProcs(d)
		if err != nil {
			// ENOTSUP: a threaded cgroup (a workload may make one); its
			// processes are listed by its threaded domain, an ancestor
			// within the tree.
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTSUP) {
				continue
			}
			return nil, err
		}
		all = append(all, pids...)
	}
	return all, nil
}

// TreeIDs returns the cgroup ids (kernfs inode numbers, the value
// bpf_get_current_cgroup_id reports) of root and every cgroup below it.
func TreeIDs(root string) (map[uint64]bool, error) {
	ds, err := dirs(root)
	if err != nil {
		return nil, err
	}
	ids := map[uint64]bool{}
	for _, d := range ds {
		id, err := ID(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		ids[id] = true
	}
	return ids, nil
}

// ID returns the cgroup id of the cgroup directory dir.
func ID(dir string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", dir, err)
	}
	return st.Ino, nil
}

// removeTree removes root and its sub-cgroups, children first. A cgroup
// directory can only be removed once it has no children and no live tasks.
func removeTree(root string) error {
	ds, err := dirs(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for i := len(ds) - 1; i >= 0; i-- {
		if err := os.Remove(ds[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing cgroup %s: %w", ds[i], err)
		}
	}
	return nil
}

// RemoveDir removes the empty cgroup directory dir. A cgroup whose last
// task is still being torn down refuses with EBUSY for a moment: that is
// retried for up to a second, calling whileBusy (if set) before each retry.
func RemoveDir(dir string, whileBusy func()) error {
	var err error
	for range 500 {
		err = os.Remove(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		if whileBusy != nil {
			whileBusy()
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}
