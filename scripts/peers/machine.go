//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"vigil/internal/hostinfo"
	"vigil/internal/wire"
)

// machine describes where the numbers were taken.
type machine struct {
	Host     wire.Host         `json:"host"`
	CPUModel string            `json:"cpu_model"`
	CPUs     int               `json:"cpus"`
	MemTotal string            `json:"mem_total"`
	Tmpfs    string            `json:"tmpfs"` // the workload's mount: source, point, options
	Cgroup   string            `json:"cgroup"`
	Tools    map[string]string `json:"tools"` // tool versions
	Go       string            `json:"go"`
	LoadAvg  []string          `json:"loadavg"` // at start and at end
}

func describeMachine() machine {
	m := machine{Host: hostinfo.Local(), CPUs: runtime.NumCPU(), Go: runtime.Version(), Tools: map[string]string{}}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	m.MemTotal = procField("/proc/meminfo", "MemTotal")
	m.LoadAvg = append(m.LoadAvg, loadavg())
	return m
}

// procField returns the first "key: value" value of a /proc file.
func procField(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(data))
}

// mountLine returns /proc/self/mounts' line for the mount at dir.
func mountLine(dir string) string {
	data, _ := os.ReadFile("/proc/self/mounts")
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[1] == dir {
			return strings.Join(f[:4], " ")
		}
	}
	return ""
}

// mountTmpfs mounts a private tmpfs at dir for the archives, the
// extracted trees and every observer's output, so no sample waits on a
// disk.
func mountTmpfs(dir string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=50%"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return nil
}

// syscallTracepoints makes the syscalls tracepoints visible to bpftrace.
// bpftrace reads their formats from tracefs; a host that has not mounted
// it gets it mounted here, and unmount undoes exactly that.
func syscallTracepoints() (unmount func(), err error) {
	for _, dir := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(dir, "events/syscalls/sys_enter_openat")); err == nil {
			return func() {}, nil
		}
	}
	dir := "/sys/kernel/tracing"
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		return nil, fmt.Errorf("tracefs is not mounted and mounting it on %s failed: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "events/syscalls/sys_enter_openat")); err != nil {
		unix.Unmount(dir, 0)
		return nil, errors.New("the kernel has no syscalls tracepoints (CONFIG_FTRACE_SYSCALLS off)")
	}
	return func() { unix.Unmount(dir, 0) }, nil
}

// toolVersion is the first line a tool prints for its version flag.
func toolVersion(ctx context.Context, argv ...string) string {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// debianPackageVersion is dpkg's version of an installed package.
func debianPackageVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// ensureInstalled installs the Debian packages that provide missing
// binaries. It returns why they could not be had.
func ensureInstalled(ctx context.Context, install bool, pkgs []string, binaries ...string) error {
	var missing []string
	for _, b := range binaries {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !install {
		return fmt.Errorf("%s not installed (--no-install given)", strings.Join(missing, ", "))
	}
	apt := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		return lastLine(string(out)), err
	}
	args := append([]string{"install", "-y", "-q", "-o", "DPkg::Lock::Timeout=600"}, pkgs...)
	msg, err := apt(args...)
	if err != nil {
		// A stale package list names versions the mirror no longer has.
		if _, uerr := apt("update", "-q", "-o", "DPkg::Lock::Timeout=600"); uerr == nil {
			msg, err = apt(args...)
		}
	}
	if err != nil {
		return fmt.Errorf("apt-get install %s failed: %s", strings.Join(pkgs, " "), msg)
	}
	for _, b := range missing {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s still missing after apt-get install %s", b, strings.Join(pkgs, " "))
		}
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
