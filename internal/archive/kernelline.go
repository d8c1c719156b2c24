package archive

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"vigil/internal/event"
)

// appendKernel appends e as one JSON line, byte-identical to what
// encoding/json produces for it, at a fraction of the cost: the kernel
// layer is by far the largest entry and its encoding sits inside the
// runner's archive_write phase. fastKernel guards the equivalence: if
// the event types gain, lose or rename a field, marshalLines falls back to
// encoding/json rather than drop the field.
func appendKernel(b []byte, e *event.Kernel) []byte {
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
	b = appendString(b, e.Comm)
	b = append(b, `,"cgroup_id":`...)
	b = strconv.AppendUint(b, e.CgroupID, 10)
	if x := e.Exec; x != nil {
		b = append(b, `,"exec":{"filename":`...)
		b = appendString(b, x.Filename)
		b = append(b, `,"argv0":`...)
		b = appendString(b, x.Argv0)
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
		b = append(b, `,"open":{"syscall":`...)
		b = appendString(b, x.Syscall)
		b = append(b, `,"dirfd":`...)
		b = strconv.AppendInt(b, int64(x.Dirfd), 10)
		b = append(b, `,"path":`...)
		b = appendString(b, x.Path)
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
		if x.PathTruncated {
			b = append(b, `,"path_truncated":true`...)
		}
		b = append(b, '}')
	}
	if x := e.Connect; x != nil {
		b = append(b, `,"connect":{"fd":`...)
		b = strconv.AppendInt(b, int64(x.Fd), 10)
		b = append(b, `,"family":`...)
		b = appendString(b, x.Family)
		b = append(b, `,"addr":`...)
		b = appendString(b, x.Addr)
		b = append(b, `,"port":`...)
		b = strconv.AppendUint(b, uint64(x.Port), 10)
		b = append(b, `,"ret":`...)
		b = strconv.AppendInt(b, x.Ret, 10)
		b = append(b, '}')
	}
	return append(b, '}', '\n')
}

const hexDigits = "0123456789abcdef"

// appendString quotes s exactly as encoding/json does with HTML escaping
// on: <, > and & as \u003c..., control bytes as \b \f \n \r \t or \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
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
	return append(b, '"')
}

// kernelFields is the JSON shape appendKernel writes, type by type.
var kernelFields = map[reflect.Type]string{
	reflect.TypeFor[event.Kernel]():  "seq ts_ns kind pid tid comm cgroup_id exec,omitempty fork,omitempty exit,omitempty open,omitempty connect,omitempty",
	reflect.TypeFor[event.Exec]():    "filename argv0",
	reflect.TypeFor[event.Fork]():    "parent_pid parent_tid child_pid child_tid thread",
	reflect.TypeFor[event.Exit]():    "code signal group_dead",
	reflect.TypeFor[event.Open]():    "syscall dirfd path flags mode ret access create truncate append path_truncated,omitempty",
	reflect.TypeFor[event.Connect](): "fd family addr port ret",
}

// fastKernel reports whether the event types still have exactly the
// fields (names, tags, kinds) appendKernel was written for.
var fastKernel = func() bool {
	kinds := map[reflect.Type][]reflect.Kind{
		reflect.TypeFor[event.Kernel]():  {reflect.Uint64, reflect.Uint64, reflect.String, reflect.Uint32, reflect.Uint32, reflect.String, reflect.Uint64, reflect.Pointer, reflect.Pointer, reflect.Pointer, reflect.Pointer, reflect.Pointer},
		reflect.TypeFor[event.Exec]():    {reflect.String, reflect.String},
		reflect.TypeFor[event.Fork]():    {reflect.Uint32, reflect.Uint32, reflect.Uint32, reflect.Uint32, reflect.Bool},
		reflect.TypeFor[event.Exit]():    {reflect.Int32, reflect.Int32, reflect.Bool},
		reflect.TypeFor[event.Open]():    {reflect.String, reflect.Int32, reflect.String, reflect.Uint64, reflect.Uint64, reflect.Int64, reflect.String, reflect.Bool, reflect.Bool, reflect.Bool, reflect.Bool},
		reflect.TypeFor[event.Connect](): {reflect.Int32, reflect.String, reflect.String, reflect.Uint16, reflect.Int64},
	}
	for t, want := range kernelFields {
		var tags []string
		var ks []reflect.Kind
		for i := 0; i < t.NumField(); i++ {
			tags = append(tags, t.Field(i).Tag.Get("json"))
			ks = append(ks, t.Field(i).Type.Kind())
		}
		if strings.Join(tags, " ") != want || !slices.Equal(ks, kinds[t]) {
			return false
		}
	}
	return true
}()
