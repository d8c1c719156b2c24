//go:build linux

package capture

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
)

// Sentinel errors returned (wrapped, with an actionable message) by
// Preflight and Open. Callers test them with errors.Is.
var (
	ErrNoPrivilege = errors.New("missing privilege")
	ErrNoBPF       = errors.New("BPF unavailable")
	ErrNoBTF       = errors.New("kernel BTF unavailable")
	ErrNoRingBuf   = errors.New("BPF ring buffer unsupported")
	ErrBadConfig   = errors.New("invalid capture configuration")
	ErrNoCgroupFS  = errors.New("not a cgroup v2 directory")
	ErrFinished    = errors.New("capture already finished")
	ErrNotAttached = errors.New("no probe attached")
)

const btfPath = "/sys/kernel/btf/vmlinux"

// Preflight checks, cheapest first, that this process can load and attach
// the capture programs cfg asks for. The error is one line saying what is
// missing and what to do about it. On success it also starts parsing the
// kernel's BTF in the background for a later Open, unless cfg may take a
// resident set and one is there: its programs already passed the kernel's
// checks, and Open will not parse anything.
func Preflight(cfg Config) error {
	if err := capsError(); err != nil {
		return err
	}
	if cfg.Resident != ResidentOff && cfg.stopStage == 0 && residentPresent(cfg) {
		return nil
	}
	if _, err := os.Stat(btfPath); err != nil {
		return fmt.Errorf("capture: %w: %s missing; use a kernel built with CONFIG_DEBUG_INFO_BTF=y", ErrNoBTF, btfPath)
	}
	// cilium's probe for the Tracing type loads an fentry program, which
	// some hosts refuse while they accept BTF tracepoints; the raw
	// tracepoint probe stands for both, and Open reports a refused load.
	if err := features.HaveProgramType(ebpf.RawTracepoint); err != nil {
		return fmt.Errorf("capture: %w: tracepoint programs cannot be loaded (%v); check CONFIG_BPF_SYSCALL and kernel.unprivileged_bpf/lockdown settings", ErrNoBPF, err)
	}
	if err := features.HaveMapType(ebpf.RingBuf); err != nil {
		return fmt.Errorf("capture: %w (%v); Linux 5.8 or newer is required", ErrNoRingBuf, err)
	}
	if err := features.HaveProgramHelper(ebpf.Kprobe, asm.FnRingbufReserveDynptr); err != nil {
		return fmt.Errorf("capture: %w: no variable-size reservation (bpf_ringbuf_reserve_dynptr: %v); Linux 5.19 or newer is required", ErrNoRingBuf, err)
	}
	// Prepare the load in the background: the caller's next steps
	// (creating the session cgroup) overlap with it, and Open then finds
	// it done.
	warm()
	return nil
}

// capsError names the missing privilege for loading and attaching the
// probes: CAP_BPF with CAP_PERFMON (tracing programs read kernel memory),
// or CAP_SYS_ADMIN, which implies both. Root has them all; so may any
// user (setpriv, capsh, systemd AmbientCapabilities).
func capsError() error {
	has, err := EffectiveCaps()
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if has(unix.CAP_SYS_ADMIN) || (has(unix.CAP_BPF) && has(unix.CAP_PERFMON)) {
		return nil
	}
	var missing []string
	if !has(unix.CAP_BPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(unix.CAP_PERFMON) {
		missing = append(missing, "CAP_PERFMON")
	}
	return fmt.Errorf("capture: %w %s (or CAP_SYS_ADMIN) to load eBPF probes (uid %d); run as root or grant them",
		ErrNoPrivilege, strings.Join(missing, "+"), unix.Geteuid())
}

// EffectiveCaps reports which capabilities (unix.CAP_*) the calling
// thread has in its effective set.
func EffectiveCaps() (has func(capability int) bool, err error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return nil, fmt.Errorf("capget: %w", err)
	}
	caps := uint64(data[0].Effective) | uint64(data[1].Effective)<<32
	return func(c int) bool { return caps&(1<<c) != 0 }, nil
}
