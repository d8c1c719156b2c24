package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"vigil/internal/event"
	"vigil/schema"
)

// Verifying a kernel line against kernel-event.schema.json with the
// general validator costs tens of microseconds; an archive holds tens of
// thousands of lines. provenKernelLine reaches the same verdict cheaply
// for a line in canonical encoding, and says nothing about any other line
// (the caller then runs the validator on it). The argument:
//
//  1. parseKernelLine reads the line in the exact layout appendKernel
//     writes into e, with every string valid UTF-8.
//  2. appendKernel(e) must reproduce the line byte for byte. So the line
//     is enc(e), its keys are exactly the fields of e (no unknown, missing
//     or duplicate key), its numbers are plain integers, and, since e's
//     strings are valid UTF-8, encoding/json decodes it back to e.
//  3. For a line that is enc(e), the schema's constraints reduce to
//     kernelFieldsValid(e): the seven common fields are always written;
//     unsigned Go integers meet every "minimum": 0, uint32 fields meet
//     "maximum": 4294967295 and uint16 port meets 65535; integer fields
//     are written as integers, booleans as booleans, strings as strings;
//     a payload object always holds all its required fields and no other
//     (path_truncated is optional); so what is left is the enums (kind,
//     syscall, access), comm's length in characters, exit.signal >= 0,
//     the connect family pattern, and exactly one payload, the one kind
//     names (min/maxProperties 8 and dependentSchemas).
//
// TestKernelFieldsValidMatchesSchema checks step 3 against the validator
// on random and boundary events. kernelSchemaSHA pins the schema text the
// argument was made for: if the schema changes, the fast path turns off
// (and a test fails) until the argument is revisited.
func provenKernelLine(line []byte, buf []byte) (event.Kernel, []byte, bool) {
	if !fastKernelCheck() {
		return event.Kernel{}, buf, false
	}
	e, ok := parseKernelLine(line)
	if !ok || kernelFieldsValid(&e) != "" {
		return event.Kernel{}, buf, false
	}
	buf = appendKernel(buf[:0], &e)
	if len(buf) != len(line)+1 || !bytes.Equal(buf[:len(line)], line) {
		return event.Kernel{}, buf, false
	}
	return e, buf, true
}

// kernelSchemaSHA is the sha256 of kernel-event.schema.json that
// kernelFieldsValid was written for.
const kernelSchemaSHA = "5259597d914bf0ec654cb6d65aed8c3f82414896c028d311ade2f10e953bfe20"

var fastKernelCheck = sync.OnceValue(func() bool {
	raw, err := schema.Raw("kernel-event")
	if err != nil {
		return false
	}
	sum := sha256.Sum256(raw)
	return fastKernel && hex.EncodeToString(sum[:]) == kernelSchemaSHA
})

// kernelFieldsValid is what kernel-event.schema.json requires of a line
// that is enc(e) (see provenKernelLine): "" when valid, otherwise a short
// description of the first violation.
func kernelFieldsValid(e *event.Kernel) string {
	switch e.Kind {
	case event.KindExec, event.KindFork, event.KindExit, event.KindOpen, event.KindConnect:
	default:
		return "kind"
	}
	if utf8.RuneCountInString(e.Comm) > 64 {
		return "comm"
	}
	payloads, match := 0, false
	count := func(present bool, kind event.Kind) {
		if present {
			payloads++
			match = match || e.Kind == kind
		}
	}
	count(e.Exec != nil, event.KindExec)
	count(e.Fork != nil, event.KindFork)
	count(e.Exit != nil, event.KindExit)
	count(e.Open != nil, event.KindOpen)
	count(e.Connect != nil, event.KindConnect)
	if payloads != 1 || !match {
		return "payload"
	}
	if x := e.Exit; x != nil && x.Signal < 0 {
		return "exit.signal"
	}
	if x := e.Open; x != nil {
		if x.Syscall != "openat" && x.Syscall != "openat2" {
			return "open.syscall"
		}
		if x.Access != event.AccessRead && x.Access != event.AccessWrite && x.Access != event.AccessReadWrite {
			return "open.access"
		}
	}
	if x := e.Connect; x != nil && !familyValid(x.Family) {
		return "connect.family"
	}
	return ""
}

// familyValid is the pattern ^(inet|inet6|unix|af_[0-9]+)$.
func familyValid(f string) bool {
	switch f {
	case "inet", "inet6", "unix":
		return true
	}
	if len(f) < 4 || f[:3] != "af_" {
		return false
	}
	for i := 3; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return false
		}
	}
	return true
}

// kparser reads the canonical kernel line layout; any deviation sets bad.
type kparser struct {
	b   []byte
	i   int
	bad bool
}

func (p *kparser) lit(s string) {
	if p.bad || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		p.bad = true
		return
	}
	p.i += len(s)
}

// peek reports whether s comes next, consuming it if so.
func (p *kparser) peek(s string) bool {
	if p.bad || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *kparser) uint(max uint64) uint64 {
	start := p.i
	var v uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if v > (math.MaxUint64-d)/10 {
			p.bad = true
			return 0
		}
		v = v*10 + d
		p.i++
	}
	if p.i == start || v > max {
		p.bad = true
	}
	return v
}

func (p *kparser) int(min, max int64) int64 {
	neg := p.peek("-")
	u := p.uint(math.MaxUint64)
	if p.bad || u > 1<<63 || (!neg && u == 1<<63) {
		p.bad = true
		return 0
	}
	v := int64(u)
	if neg {
		v = -int64(u-1) - 1
	}
	if v < min || v > max {
		p.bad = true
	}
	return v
}

func (p *kparser) bool() bool {
	if p.peek("true") {
		return true
	}
	p.lit("false")
	return false
}

// str reads a JSON string. Escapes are decoded as encoding/json does;
// a surrogate escape or a result that is not valid UTF-8 is left to the
// general path.
func (p *kparser) str() string {
	p.lit(`"`)
	if p.bad {
		return ""
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			if !utf8.ValidString(s) {
				p.bad = true
			}
			return s
		}
		if c == '\\' {
			return p.escaped(start)
		}
		if c < 0x20 {
			break
		}
		p.i++
	}
	p.bad = true
	return ""
}

func (p *kparser) escaped(start int) string {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				p.bad = true
			}
			return string(out)
		case c < 0x20:
			p.bad = true
			return ""
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		esc := p.b[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if len(p.b)-p.i < 4 {
				p.bad = true
				return ""
			}
			var r rune
			for _, h := range p.b[p.i : p.i+4] {
				var d byte
				switch {
				case h >= '0' && h <= '9':
					d = h - '0'
				case h >= 'a' && h <= 'f':
					d = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					d = h - 'A' + 10
				default:
					p.bad = true
					return ""
				}
				r = r<<4 | rune(d)
			}
			p.i += 4
			if utf16.IsSurrogate(r) {
				p.bad = true
				return ""
			}
			out = utf8.AppendRune(out, r)
		default:
			p.bad = true
			return ""
		}
	}
	p.bad = true
	return ""
}

// parseKernelLine reads one line (without its newline) in the layout of
// appendKernel. ok is false when the line deviates in any way.
func parseKernelLine(line []byte) (e event.Kernel, ok bool) {
	p := &kparser{b: line}
	p.lit(`{"seq":`)
	e.Seq = p.uint(math.MaxUint64)
	p.lit(`,"ts_ns":`)
	e.TimeNS = p.uint(math.MaxUint64)
	p.lit(`,"kind":`)
	e.Kind = event.Kind(p.str())
	p.lit(`,"pid":`)
	e.PID = uint32(p.uint(math.MaxUint32))
	p.lit(`,"tid":`)
	e.TID = uint32(p.uint(math.MaxUint32))
	p.lit(`,"comm":`)
	e.Comm = p.str()
	p.lit(`,"cgroup_id":`)
	e.CgroupID = p.uint(math.MaxUint64)
	if p.peek(`,"exec":{"filename":`) {
		x := &event.Exec{}
		x.Filename = p.str()
		p.lit(`,"argv0":`)
		x.Argv0 = p.str()
		p.lit(`}`)
		e.Exec = x
	}
	if p.peek(`,"fork":{"parent_pid":`) {
		x := &event.Fork{}
		x.ParentPID = uint32(p.uint(math.MaxUint32))
		p.lit(`,"parent_tid":`)
		x.ParentTID = uint32(p.uint(math.MaxUint32))
		p.lit(`,"child_pid":`)
		x.ChildPID = uint32(p.uint(math.MaxUint32))
		p.lit(`,"child_tid":`)
		x.ChildTID = uint32(p.uint(math.MaxUint32))
		p.lit(`,"thread":`)
		x.Thread = p.bool()
		p.lit(`}`)
		e.Fork = x
	}
	if p.peek(`,"exit":{"code":`) {
		x := &event.Exit{}
		x.Code = int32(p.int(math.MinInt32, math.MaxInt32))
		p.lit(`,"signal":`)
		x.Signal = int32(p.int(math.MinInt32, math.MaxInt32))
		p.lit(`,"group_dead":`)
		x.GroupDead = p.bool()
		p.lit(`}`)
		e.Exit = x
	}
	if p.peek(`,"open":{"syscall":`) {
		x := &event.Open{}
		x.Syscall = p.str()
		p.lit(`,"dirfd":`)
		x.Dirfd = int32(p.int(math.MinInt32, math.MaxInt32))
		p.lit(`,"path":`)
		x.Path = p.str()
		p.lit(`,"flags":`)
		x.Flags = p.uint(math.MaxUint64)
		p.lit(`,"mode":`)
		x.Mode = p.uint(math.MaxUint64)
		p.lit(`,"ret":`)
		x.Ret = p.int(math.MinInt64, math.MaxInt64)
		p.lit(`,"access":`)
		x.Access = p.str()
		p.lit(`,"create":`)
		x.Create = p.bool()
		p.lit(`,"truncate":`)
		x.Truncate = p.bool()
		p.lit(`,"append":`)
		x.Append = p.bool()
		x.PathTruncated = p.peek(`,"path_truncated":true`)
		p.lit(`}`)
		e.Open = x
	}
	if p.peek(`,"connect":{"fd":`) {
		x := &event.Connect{}
		x.Fd = int32(p.int(math.MinInt32, math.MaxInt32))
		p.lit(`,"family":`)
		x.Family = p.str()
		p.lit(`,"addr":`)
		x.Addr = p.str()
		p.lit(`,"port":`)
		x.Port = uint16(p.uint(math.MaxUint16))
		p.lit(`,"ret":`)
		x.Ret = p.int(math.MinInt64, math.MaxInt64)
		p.lit(`}`)
		e.Connect = x
	}
	p.lit(`}`)
	return e, !p.bad && p.i == len(line)
}
