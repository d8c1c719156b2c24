package archive

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"vigil/internal/wire"
)

// appendKernel appends e as one JSON line, byte-identical to what
// encoding/json writes for it (TestAppendKernelMatchesEncodingJSON fills
// every field of the event types, by reflection, and compares). The kernel
// layer is by far the largest entry, and encoding/json spends most of its
// time on the byte strings' MarshalJSON and on re-scanning their output.
func appendKernel(b []byte, e *wire.Kernel) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendUint(b, e.TimeNS, 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind))
	b = append(b, `,"pid":`...)
	b = strconv.AppendUint(b, uint64(e.PID), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendUint(b, uint64(e.TID), 10)
	b = append(b, `,"comm":`...)
	b = appendBytes(b, e.Comm)
	b = append(b, `,"cgroup_id":`...)
	b = strconv.AppendUint(b, e.CgroupID, 10)
	b = append(b, `,"hook":`...)
	b = appendString(b, e.Hook)
	if e.IOWorker {
		b = append(b, `,"io_worker":true`...)
	}
	if x := e.Exec; x != nil {
		b = append(b, `,"exec":{"file":`...)
		b = appendResolved(b, &x.File)
		b = append(b, `,"filename":`...)
		b = appendBytes(b, x.Filename)
		b = append(b, `,"via":`...)
		b = appendString(b, x.Via)
		b = append(b, `,"argv":`...)
		if x.Argv == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, a := range x.Argv {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendBytes(b, a)
			}
			b = append(b, ']')
		}
		b = append(b, `,"argc":`...)
		b = strconv.AppendUint(b, uint64(x.Argc), 10)
		if x.ArgvTruncated {
			b = append(b, `,"argv_truncated":true`...)
		}
		b = append(b, `,"ino":`...)
		b = strconv.AppendUint(b, x.Ino, 10)
		b = append(b, `,"dev":`...)
		b = strconv.AppendUint(b, uint64(x.Dev), 10)
		if x.OldTID != 0 {
			b = append(b, `,"old_tid":`...)
			b = strconv.AppendUint(b, uint64(x.OldTID), 10)
		}
		b = append(b, '}')
	}
	if x := e.ExecFailed; x != nil {
		b = append(b, `,"exec_failed":{"syscall":`...)
		b = appendString(b, x.Syscall)
		b = append(b, `,"ret":`...)
		b = strconv.AppendInt(b, x.Ret, 10)
		b = append(b, `,"name":`...)
		b = appendName(b, &x.Name)
		b = append(b, '}')
	}
	if x := e.Fork; x != nil {
		b = append(b, `,"fork":{"parent_pid":`...)
		b = strconv.AppendUint(b, uint64(x.ParentPID), 10)
		b = append(b, `,"parent_tid":`...)
		b = strconv.AppendUint(b, uint64(x.ParentTID), 10)
		b = append(b, `,"child_pid":`...)
		b = strconv.AppendUint(b, uint64(x.ChildPID), 10)
		b = append(b, `,"child_tid":`...)
		b = strconv.AppendUint(b, uint64(x.ChildTID), 10)
		b = append(b, `,"thread":`...)
		b = strconv.AppendBool(b, x.Thread)
		if x.Entered {
			b = append(b, `,"entered":true`...)
		}
		if x.IOWorker {
			b = append(b, `,"io_worker":true`...)
		}
		b = append(b, '}')
	}
	if x := e.Exit; x != nil {
		b = append(b, `,"exit":{"code":`...)
		b = strconv.AppendInt(b, int64(x.Code), 10)
		b = append(b, `,"signal":`...)
		b = strconv.AppendInt(b, int64(x.Signal), 10)
		b = append(b, `,"group_dead":`...)
		b = strconv.AppendBool(b, x.GroupDead)
		b = append(b, '}')
	}
	if x := e.Open; x != nil {
		b = append(b, `,"open":{`...)
		if x.File != nil {
			b = append(b, `"file":`...)
			b = appendResolved(b, x.File)
			b = append(b, ',')
		}
		b = append(b, `"name":`...)
		b = appendName(b, &x.Name)
		b = append(b, `,"dirfd":`...)
		b = strconv.AppendInt(b, int64(x.Dirfd), 10)
		b = append(b, `,"flags":`...)
		b = strconv.AppendUint(b, x.Flags, 10)
		b = append(b, `,"mode":`...)
		b = strconv.AppendUint(b, x.Mode, 10)
		b = append(b, `,"ret":`...)
		b = strconv.AppendInt(b, x.Ret, 10)
		b = append(b, `,"access":`...)
		b = appendString(b, x.Access)
		b = append(b, `,"create":`...)
		b = strconv.AppendBool(b, x.Create)
		b = append(b, `,"truncate":`...)
		b = strconv.AppendBool(b, x.Truncate)
		b = append(b, `,"append":`...)
		b = strconv.AppendBool(b, x.Append)
		b = append(b, `,"syscall":`...)
		b = appendString(b, x.Syscall)
		if x.Ino != 0 {
			b = append(b, `,"ino":`...)
			b = strconv.AppendUint(b, x.Ino, 10)
		}
		if x.Dev != 0 {
			b = append(b, `,"dev":`...)
			b = strconv.AppendUint(b, uint64(x.Dev), 10)
		}
		if x.Created != nil {
			b = append(b, `,"created":`...)
			b = strconv.AppendBool(b, *x.Created)
		}
		b = append(b, '}')
	}
	if x := e.FileOp; x != nil {
		b = append(b, `,"file_op":{`...)
		if x.File != nil {
			b = append(b, `"file":`...)
			b = appendResolved(b, x.File)
			b = append(b, ',')
		}
		if x.Name != nil {
			b = append(b, `"name":`...)
			b = appendName(b, x.Name)
			b = append(b, ',')
		}
		if x.NewName != nil {
			b = append(b, `"new_name":`...)
			b = appendName(b, x.NewName)
			b = append(b, ',')
		}
		if x.Target != nil {
			b = append(b, `"target":`...)
			b = appendBytes(b, *x.Target)
			b = append(b, ',')
		}
		for _, f := range []struct {
			name string
			v    *uint32
		}{{`"mode":`, x.Mode}, {`"uid":`, x.UID}, {`"gid":`, x.GID}} {
			if f.v != nil {
				b = append(b, f.name...)
				b = strconv.AppendUint(b, uint64(*f.v), 10)
				b = append(b, ',')
			}
		}
		if x.Length != nil {
			b = append(b, `"length":`...)
			b = strconv.AppendInt(b, *x.Length, 10)
			b = append(b, ',')
		}
		if x.Flags != 0 {
			b = append(b, `"flags":`...)
			b = strconv.AppendUint(b, x.Flags, 10)
			b = append(b, ',')
		}
		b = append(b, `"syscall":`...)
		b = appendString(b, x.Syscall)
		b = append(b, `,"ret":`...)
		b = strconv.AppendInt(b, x.Ret, 10)
		b = append(b, '}')
	}
	if x := e.Net; x != nil {
		b = append(b, `,"net":{"family":`...)
		b = appendString(b, x.Family)
		b = append(b, `,"addr":`...)
		b = appendBytes(b, x.Addr)
		b = append(b, `,"port":`...)
		b = strconv.AppendUint(b, uint64(x.Port), 10)
		b = append(b, `,"addr_from":`...)
		b = appendString(b, x.AddrFrom)
		b = append(b, `,"sock_type":`...)
		b = appendString(b, x.SockType)
		b = append(b, `,"fd":`...)
		b = strconv.AppendInt(b, int64(x.Fd), 10)
		b = append(b, `,"syscall":`...)
		b = appendString(b, x.Syscall)
		b = append(b, `,"ret":`...)
		b = strconv.AppendInt(b, x.Ret, 10)
		b = append(b, '}')
	}
	if x := e.Migrate; x != nil {
		b = append(b, `,"cgroup_migrate":{"dst_cgroup_id":`...)
		b = strconv.AppendUint(b, x.DstCgroupID, 10)
		b = append(b, `,"dst_path":`...)
		b = appendBytes(b, x.DstPath)
		b = append(b, `,"mover_pid":`...)
		b = strconv.AppendUint(b, uint64(x.MoverPID), 10)
		b = append(b, `,"mover_tid":`...)
		b = strconv.AppendUint(b, uint64(x.MoverTID), 10)
		b = append(b, `,"was_tracked":`...)
		b = strconv.AppendBool(b, x.WasTracked)
		b = append(b, `,"default_hierarchy":`...)
		b = strconv.AppendBool(b, x.DefaultHierarchy)
		b = append(b, `,"into_session":`...)
		b = strconv.AppendBool(b, x.IntoSession)
		b = append(b, `,"threadgroup":`...)
		b = strconv.AppendBool(b, x.Threadgroup)
		b = append(b, '}')
	}
	if x := e.IOUring; x != nil {
		b = append(b, `,"io_uring":{"opcode":`...)
		b = strconv.AppendUint(b, uint64(x.Opcode), 10)
		b = append(b, `,"op":`...)
		b = appendString(b, x.Op)
		b = append(b, `,"res":`...)
		b = strconv.AppendInt(b, x.Res, 10)
		b = append(b, `,"user_data":`...)
		b = strconv.AppendUint(b, x.UserData, 10)
		if x.File != nil {
			b = append(b, `,"file":`...)
			b = appendResolved(b, x.File)
		}
		if x.Access != "" {
			b = append(b, `,"access":`...)
			b = appendString(b, x.Access)
		}
		if x.Ino != 0 {
			b = append(b, `,"ino":`...)
			b = strconv.AppendUint(b, x.Ino, 10)
		}
		if x.Dev != 0 {
			b = append(b, `,"dev":`...)
			b = strconv.AppendUint(b, uint64(x.Dev), 10)
		}
		if x.Created != nil {
			b = append(b, `,"created":`...)
			b = strconv.AppendBool(b, *x.Created)
		}
		if x.Direct {
			b = append(b, `,"direct":true`...)
		}
		if x.Name != nil {
			b = append(b, `,"name":`...)
			b = appendName(b, x.Name)
		}
		if x.NewName != nil {
			b = append(b, `,"new_name":`...)
			b = appendName(b, x.NewName)
		}
		if x.Target != nil {
			b = append(b, `,"target":`...)
			b = appendBytes(b, *x.Target)
		}
		b = append(b, '}')
	}
	if len(e.Incomplete) > 0 {
		b = append(b, `,"incomplete":[`...)
		for i, part := range e.Incomplete {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, part)
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}

func appendResolved(b []byte, p *wire.ResolvedPath) []byte {
	b = append(b, `{"path":`...)
	b = appendBytes(b, p.Path)
	if p.Detached {
		b = append(b, `,"detached":true`...)
	}
	if p.Deleted {
		b = append(b, `,"deleted":true`...)
	}
	if p.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

func appendName(b []byte, n *wire.Name) []byte {
	b = append(b, `{"requested":`...)
	b = appendBytes(b, n.Requested)
	if n.Dir != nil {
		b = append(b, `,"dir":`...)
		b = appendResolved(b, n.Dir)
	}
	if n.Missing {
		b = append(b, `,"missing":true`...)
	}
	if n.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// appendBytes is wire.Bytes.MarshalJSON, appended. Valid UTF-8 (nearly
// every path and name) is quoted in one pass; the first invalid byte
// sends the value to the {"text","b64"} form instead.
func appendBytes(b []byte, s wire.Bytes) []byte {
	if out, ok := appendQuoted(b, string(s), true); ok {
		return out
	}
	b = append(b, `{"text":`...)
	b = appendString(b, s.Text())
	b = append(b, `,"b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, []byte(s))
	return append(b, `"}`...)
}

const hexDigits = "0123456789abcdef"

// plainJSON[c] says that byte c stands for itself inside a JSON string as
// encoding/json writes it: printable ASCII other than ", \, <, > and &.
// One table lookup per byte is the whole cost of a string that needs no
// escape, which is nearly every string of an archive.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendString quotes s exactly as encoding/json does with HTML escaping
// on: <, > and & as \u003c..., control bytes as \b \f \n \r \t or \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b, _ = appendQuoted(b, s, false)
	return b
}

// appendQuoted is appendString; with strict, invalid UTF-8 stops it
// and it returns false (b is then to be discarded).
func appendQuoted(b []byte, s string, strict bool) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if strict {
				return b, false
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}
