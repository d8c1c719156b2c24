package evidence

import (
	"strings"
	"unicode/utf8"

	"vigil/internal/event"
)

// JSON strings are Unicode: a path or command name that is not valid
// UTF-8 (legal on Linux) cannot be archived byte for byte, and encoding it
// anyway would write \ufffd escapes that no longer re-encode to the same
// bytes, so the archive would fail its own canonical-encoding check.
// Assemble therefore replaces each run of invalid bytes with U+FFFD and
// counts the events it changed (Health.NonUTF8Events).

// sanitizeKernel makes every string of k valid UTF-8 and returns how many
// events it changed. Payloads are copied before they are changed, so the
// caller's events stay as they were.
func sanitizeKernel(k []event.Kernel) uint64 {
	var n uint64
	for i := range k {
		if !kernelNeedsFix(&k[i]) {
			continue
		}
		n++
		e := &k[i]
		e.Comm = fixUTF8(e.Comm)
		if e.Exec != nil {
			x := *e.Exec
			x.Filename, x.Argv0 = fixUTF8(x.Filename), fixUTF8(x.Argv0)
			e.Exec = &x
		}
		if e.Open != nil {
			x := *e.Open
			x.Syscall, x.Path, x.Access = fixUTF8(x.Syscall), fixUTF8(x.Path), fixUTF8(x.Access)
			e.Open = &x
		}
		if e.Connect != nil {
			x := *e.Connect
			x.Family, x.Addr = fixUTF8(x.Family), fixUTF8(x.Addr)
			e.Connect = &x
		}
		e.Kind = event.Kind(fixUTF8(string(e.Kind)))
	}
	return n
}

func kernelNeedsFix(e *event.Kernel) bool {
	ok := utf8.ValidString(e.Comm) && utf8.ValidString(string(e.Kind))
	if x := e.Exec; x != nil {
		ok = ok && utf8.ValidString(x.Filename) && utf8.ValidString(x.Argv0)
	}
	if x := e.Open; x != nil {
		ok = ok && utf8.ValidString(x.Path) && utf8.ValidString(x.Syscall) && utf8.ValidString(x.Access)
	}
	if x := e.Connect; x != nil {
		ok = ok && utf8.ValidString(x.Family) && utf8.ValidString(x.Addr)
	}
	return !ok
}

func fixUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
