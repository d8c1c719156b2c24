package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"vigil/internal/wire"
)

// Validating a kernel line with the general JSON Schema validator costs
// tens of microseconds; an archive holds tens of thousands of lines.
// provenKernelLine reaches the same verdict for a line in canonical
// encoding, and says nothing about any other line (the caller then runs
// the validator on it). The argument:
//
//  1. parseCanonicalKernel reads e from the line, and accepts only the
//     bytes appendKernel writes for e (FuzzParseCanonicalKernel); or
//     the line decodes strictly (no unknown field) into e and
//     appendKernel(e) reproduces it byte for byte. Either way the line
//     is enc(e): its keys are exactly e's fields (every field without
//     omitempty is present, an omitempty one only when set), numbers are
//     integers within the Go types' ranges, and byte strings passed
//     wire.Bytes.UnmarshalJSON's checks.
//  2. For a line that is enc(e), what the schema adds is kernelValid(e):
//     the enums and patterns, the ranges narrower than the Go types, and
//     exactly one payload, the one the kind names.
//
// TestKernelValidMatchesSchema holds kernelValid against the validator on
// events with each constraint broken in turn.
//
// e is written whatever the verdict; it is the line's event only when the
// line is proven.
func provenKernelLine(line []byte, e *wire.Kernel, s *proveScratch) bool {
	if parseCanonicalKernel(line, e, &s.arena) {
		if reencodeParsed {
			s.buf = appendKernel(s.buf[:0], e)
			if !bytes.Equal(s.buf, append(line[:len(line):len(line)], '\n')) {
				panic(fmt.Sprintf("parseCanonicalKernel accepted a line appendKernel writes otherwise:\n%s%s", append(line[:len(line):len(line)], '\n'), s.buf))
			}
		}
		return kernelValid(e) == ""
	}
	*e = wire.Kernel{}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(e); err != nil || dec.More() {
		return false
	}
	s.buf = appendKernel(s.buf[:0], e)
	if len(s.buf) != len(line)+1 || !bytes.Equal(s.buf[:len(line)], line) {
		return false
	}
	return kernelValid(e) == ""
}

// reencodeParsed makes provenKernelLine re-encode what
// parseCanonicalKernel accepted and panic if it differs: the package's
// tests set it, so every archive they read checks the parser's claim.
var reencodeParsed bool

// proveScratch is what one validating goroutine reuses from line to line.
type proveScratch struct {
	buf   []byte
	arena lineArena
}

var accesses = []string{wire.AccessRead, wire.AccessWrite, wire.AccessReadWrite, wire.AccessPath}

// netPatterns are compiled on first use: at package level every command
// would pay for them at start-up, and only reading socket events needs them.
var netPatterns = sync.OnceValue(func() (p struct{ family, sockType *regexp.Regexp }) {
	p.family = regexp.MustCompile(`^(inet|inet6|unix|af_[0-9]+)$`)
	p.sockType = regexp.MustCompile(`^(|stream|dgram|raw|seqpacket|type_[0-9]+)$`)
	return p
})

// kernelValid names the first constraint of kernel-event.schema.json that
// e, encoded canonically, breaks, or returns "".
func kernelValid(e *wire.Kernel) string {
	if !slices.Contains(wire.Kinds, e.Kind) {
		return "kind"
	}
	if !validHook(e.Hook) {
		return "hook"
	}
	if e.Incomplete != nil && !knownParts(e.Incomplete) {
		return "incomplete"
	}
	payloads := [...]struct {
		name string
		set  bool
	}{
		{"exec", e.Exec != nil}, {"exec_failed", e.ExecFailed != nil}, {"fork", e.Fork != nil}, {"exit", e.Exit != nil},
		{"open", e.Open != nil}, {"file_op", e.FileOp != nil}, {"net", e.Net != nil}, {"cgroup_migrate", e.Migrate != nil},
		{"io_uring", e.IOUring != nil},
	}
	want := string(e.Kind)
	if slices.Contains(wire.FileOpKinds, e.Kind) {
		want = "file_op"
	} else if slices.Contains(wire.NetKinds, e.Kind) {
		want = "net"
	}
	for _, p := range payloads {
		if p.set != (p.name == want) {
			return "payload " + p.name
		}
	}
	switch {
	case e.Exec != nil:
		if e.Exec.Via != "path" && e.Exec.Via != "fd" {
			return "exec.via"
		}
		if e.Exec.Argv == nil {
			return "exec.argv"
		}
	case e.ExecFailed != nil:
		x := e.ExecFailed
		if x.Syscall != "execve" && x.Syscall != "execveat" {
			return "exec_failed.syscall"
		}
		if x.Ret > -1 || x.Ret < -4095 {
			return "exec_failed.ret"
		}
	case e.Exit != nil:
		if e.Exit.Code < 0 || e.Exit.Code > 255 || e.Exit.Signal < 0 || e.Exit.Signal > 127 {
			return "exit"
		}
	case e.Open != nil:
		if !slices.Contains(accesses, e.Open.Access) {
			return "open.access"
		}
		if e.Open.Syscall == "" {
			return "open.syscall"
		}
	case e.FileOp != nil:
		if e.FileOp.Syscall == "" {
			return "file_op.syscall"
		}
		if e.FileOp.Ret > 0 || e.FileOp.Ret < -4095 {
			return "file_op.ret"
		}
	case e.Net != nil:
		n := e.Net
		if !netPatterns().family.MatchString(n.Family) {
			return "net.family"
		}
		if n.AddrFrom != "socket" && n.AddrFrom != "caller" {
			return "net.addr_from"
		}
		if !netPatterns().sockType.MatchString(n.SockType) {
			return "net.sock_type"
		}
		if n.Syscall == "" {
			return "net.syscall"
		}
	case e.IOUring != nil:
		u := e.IOUring
		if u.Opcode > 255 {
			return "io_uring.opcode"
		}
		if u.Op == "" {
			return "io_uring.op"
		}
		if u.Access != "" && !slices.Contains(accesses, u.Access) {
			return "io_uring.access"
		}
	}
	return ""
}

// validHook is the schema's hook pattern ^tp_btf/[a-z_0-9]+$, without a
// regular expression: it runs for every line.
func validHook(h string) bool {
	rest, ok := strings.CutPrefix(h, "tp_btf/")
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// knownParts is the schema's rule for incomplete: at least one part, each
// a part an event can lack, none twice. (That they come in
// wire.IncompleteOrder is evidence's check.)
func knownParts(parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	for i, p := range parts {
		if !slices.Contains(wire.IncompleteOrder, p) || slices.Contains(parts[:i], p) {
			return false
		}
	}
	return true
}
