// Package evidencetest builds synthetic, self-consistent evidence bundles
// for tests that must not need root or BPF.
package evidencetest

import (
	"fmt"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// RunID is the run id of every fixture bundle.
const RunID = "run-0123456789abcdef"

// Run returns a plausible run.json.
func Run() wire.Run {
	return wire.Run{
		Schema:       wire.RunSchema,
		RunID:        RunID,
		VigilVersion: "0.1.0-test",
		Argv:         []string{"vigil", "agent", "--kernel-events", "4"},
		EnvNames:     []string{"HOME", "PATH", wire.EnvRunID, wire.EnvSDKEventLog},
		Cwd:          "/home/agent",
		StartTime:    "2026-01-02T03:04:05.123456789Z",
		EndTime:      "2026-01-02T03:04:06.5Z",
		Host: wire.Host{
			Kernel: "6.18.0-test", Arch: "amd64", OS: "linux",
			HostClass: "linux-amd64-6.18.0-test", Hostname: "testhost",
		},
		PhasesMS: map[string]float64{
			"preflight": 1.5, "attach": 12.25, "cgroup": 0.5, "spawn": 0.75,
			"child_runtime": 900, "drain": 0.125, "archive_write": 3, "teardown": 0.25,
		},
		SessionCgroup: "/sys/fs/cgroup/unified/vigil/" + RunID,
		Child:         &wire.Credentials{UID: 1000, GID: 1000, Groups: []uint32{4, 27}},
	}
}

// CleanInput is the health input of a run where everything worked.
func CleanInput() evidence.HealthInput {
	return evidence.HealthInput{
		CaptureAvailable: true,
		Probes: []wire.Probe{
			{Name: "tp_btf/sched_process_exec", Attached: true, Required: true},
			{Name: "tp_btf/sched_process_fork", Attached: true, Required: true},
			{Name: "tp_btf/sched_process_exit", Attached: true, Required: true},
			{Name: "tp_btf/sys_exit", Attached: true, Required: true},
			{Name: "tp_btf/io_uring_complete", Attached: true, Required: false},
		},
		Coverage: wire.Coverage{
			Covered: []wire.CoveredClass{
				{Class: "exec", Hook: "tp_btf/sched_process_exec", Attached: true, Source: "kernel"},
				{Class: "fork", Hook: "tp_btf/sched_process_fork", Attached: true, Source: "kernel"},
				{Class: "exit", Hook: "tp_btf/sched_process_exit", Attached: true, Source: "kernel"},
				{Class: "open", Hook: "tp_btf/sys_exit", Attached: true, Source: "kernel and caller memory"},
				{Class: "connect", Hook: "tp_btf/sys_exit", Attached: true, Source: "kernel socket"},
				{Class: "io_uring", Hook: "tp_btf/io_uring_complete", Attached: true, Source: "kernel"},
			},
			NotCovered: []wire.UncoveredClass{},
		},
		Drops:                 map[wire.Kind]uint64{},
		DrainProven:           true,
		DrainDetail:           "ring buffer empty after cgroup emptied",
		ChildPlacedBeforeExec: true,
	}
}

// Kernel returns n kernel events (n >= 8) shaped like an agent run: the
// runner's clone of the agent into the session, an exec, a fork, then file creates and reads, one connect, and exits, with
// contiguous seqs from 0 and timestamps 1000 ns apart from base.
func Kernel(n int, base uint64) []wire.Kernel {
	const pid, runner, cg = 4242, 4000, 77
	out := make([]wire.Kernel, 0, n)
	add := func(k wire.Kernel) {
		k.Seq = uint64(len(out))
		k.TimeNS = base + 1000*k.Seq
		if k.PID == 0 {
			k.PID, k.TID = pid, pid
		}
		k.Comm, k.CgroupID = "agent", cg
		if k.Hook == "" {
			k.Hook = "tp_btf/sched_process_fork"
			if k.Kind == wire.KindExit {
				k.Hook = "tp_btf/sched_process_exit"
			}
		}
		out = append(out, k)
	}
	add(wire.Kernel{Kind: wire.KindFork, PID: runner, TID: runner, Fork: &wire.Fork{ParentPID: runner, ParentTID: runner, ChildPID: pid, ChildTID: pid, Entered: true}})
	add(wire.Kernel{Kind: wire.KindExec, Hook: "tp_btf/sched_process_exec", Exec: &wire.Exec{File: wire.ResolvedPath{Path: "/usr/bin/agent"},
		Filename: "/usr/bin/agent", Via: "path", Argv: []wire.Bytes{"agent"}, Argc: 1, Ino: 12, Dev: 2049}})
	add(wire.Kernel{Kind: wire.KindFork, Fork: &wire.Fork{ParentPID: pid, ParentTID: pid, ChildPID: pid + 1, ChildTID: pid + 1}})
	add(wire.Kernel{Kind: wire.KindConnect, Hook: "tp_btf/sys_exit", Net: &wire.Net{Fd: 5, Family: "inet", Addr: "127.0.0.1", Port: 4318,
		AddrFrom: "socket", SockType: "stream", Syscall: "connect", Ret: -115}})
	add(wire.Kernel{Kind: wire.KindOpen, Hook: "tp_btf/sys_exit", Open: &wire.Open{Syscall: "openat", Dirfd: -100,
		Name: wire.Name{Requested: "/etc/missing"}, Ret: -2, Access: wire.AccessRead}})
	work := &wire.ResolvedPath{Path: "/home/agent"}
	for i := 0; len(out) < n-2; i++ {
		name := wire.Bytes(fmt.Sprintf("work/file-%05d", i/2))
		file := &wire.ResolvedPath{Path: "/home/agent/" + name}
		if i%2 == 0 {
			add(wire.Kernel{Kind: wire.KindOpen, Hook: "tp_btf/sys_exit", Open: &wire.Open{Syscall: "openat", Dirfd: -100,
				File: file, Name: wire.Name{Requested: name}, Flags: 0o1101, Mode: 0o644, Ret: 3,
				Access: wire.AccessWrite, Create: true, Truncate: true, Ino: uint64(100 + i), Dev: 2049}})
		} else {
			add(wire.Kernel{Kind: wire.KindOpen, Hook: "tp_btf/sys_exit", Open: &wire.Open{Syscall: "openat2", Dirfd: -100,
				File: file, Name: wire.Name{Requested: name, Dir: work}, Ret: 3, Access: wire.AccessRead, Ino: uint64(99 + i), Dev: 2049}})
		}
	}
	add(wire.Kernel{Kind: wire.KindExit, PID: pid + 1, TID: pid + 1, Exit: &wire.Exit{Code: 0, GroupDead: true}})
	add(wire.Kernel{Kind: wire.KindExit, Exit: &wire.Exit{Code: 0, GroupDead: true}})
	return out
}

// SDK returns a well-formed SDK log of calls tool calls whose windows cover
// the kernel events of Kernel(n, base) in equal consecutive slices,
// followed by run_finished.
func SDK(calls, n int, base uint64) []wire.SDK {
	var out []wire.SDK
	add := func(s wire.SDK) {
		s.Schema, s.RunID, s.Seq, s.PID = wire.SDKSchema, RunID, uint64(len(out)), 4242
		s.TimeUnixNS = 1_767_323_045_000_000_000 + int64(s.MonoNS)
		out = append(out, s)
	}
	per := n / calls
	for c := 0; c < calls; c++ {
		id := fmt.Sprintf("call_%03d", c)
		start := base + uint64(c*per)*1000
		end := start + uint64(per-1)*1000
		add(wire.SDK{Type: wire.SDKToolCallStarted, MonoNS: start, ToolCallID: id, ToolName: "write_file"})
		add(wire.SDK{Type: wire.SDKToolCallCompleted, MonoNS: end, ToolCallID: id, ToolName: "write_file", Status: "ok"})
	}
	add(wire.SDK{Type: wire.SDKRunFinished, MonoNS: base + uint64(n)*1000, Status: "ok"})
	return out
}

// Bundle returns a complete, consistent bundle with n kernel events and,
// when calls > 0, an SDK layer of that many tool calls.
func Bundle(n, calls int) *evidence.Bundle {
	const base = 1_000_000_000
	var sdk []wire.SDK
	if calls > 0 {
		sdk = SDK(calls, n, base)
	}
	in := CleanInput()
	k := Kernel(n, base)
	in.Emitted = evidence.CountKinds(k)
	return evidence.Assemble(Run(), k, sdk, in)
}

// WithExtra is Bundle(n, calls) with extra events appended by pid 4242
// after the last one (seqs and times follow, outside every tool call), and
// the run id set to runID when it is not "".
func WithExtra(n, calls int, runID string, extra ...wire.Kernel) *evidence.Bundle {
	b := Bundle(n, calls)
	k := append([]wire.Kernel(nil), b.Kernel...)
	last := k[len(k)-1]
	for i, e := range extra {
		e.Seq, e.TimeNS = last.Seq+uint64(i)+1, last.TimeNS+uint64(i+1)*1000
		e.PID, e.TID, e.Comm, e.CgroupID, e.Hook = 4242, 4242, "agent", 77, "tp_btf/sys_exit"
		k = append(k, e)
	}
	run, sdk := b.Run, b.SDK
	if runID != "" {
		run.RunID = runID
		sdk = nil
		for _, s := range b.SDK {
			s.RunID = runID
			sdk = append(sdk, s)
		}
	}
	in := CleanInput()
	in.Emitted = evidence.CountKinds(k)
	return evidence.Assemble(run, k, sdk, in)
}
