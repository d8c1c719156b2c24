//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// tracedSyscalls is the event set every observer is asked for. vigil
// records more (forks, file-tree changes, ...); only these kinds are
// counted for it.
var tracedSyscalls = []string{"open", "openat", "openat2", "connect", "execve"}

// extractedFile matches the name of a regular file of a workload archive
// (see archiveName), however the observer spells the path: relative
// ("./d0000/vpf0000001.dat"), absolute, or resolved by the kernel.
var extractedFile = regexp.MustCompile(`(^|/)d[0-9]{4}/vpf[0-9]{7}\.dat$`)

// counts is what one observer's output says about one run.
type counts struct {
	// FileOpens are open events on a file of the archive: what the
	// workload is expected to produce exactly N of.
	FileOpens int
	// SetEvents are all events of the traced set (opens, execs,
	// connects), including the workload's N-independent ones.
	SetEvents int
	// Lost is what the observer itself reports it lost; -1 when the
	// output format has no such report.
	Lost int64
}

// countStrace reads the output of strace -f -o FILE. A call interrupted
// by another task's output appears as "NAME(... <unfinished ...>" and,
// later, "<... NAME resumed>": it is counted once, from its first line,
// which holds the path.
func countStrace(r io.Reader) (counts, error) {
	c := counts{Lost: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		// strace -f prefixes every line with the task id, padded to five
		// columns ("812   openat(", "7928  openat(", "12345 openat(").
		if i := strings.IndexByte(line, ' '); i > 0 && isDigits(line[:i]) {
			line = strings.TrimLeft(line[i:], " ")
		}
		name, rest, ok := strings.Cut(line, "(")
		if !ok || !isTraced(name) {
			continue // "+++ exited", "--- SIG...", "<... resumed>"
		}
		c.SetEvents++
		if strings.HasPrefix(name, "open") {
			if p, ok := firstQuoted(rest); ok && extractedFile.MatchString(p) {
				c.FileOpens++
			}
		}
	}
	return c, sc.Err()
}

// bpftraceLost matches bpftrace's report of events the perf buffer
// dropped: "Lost 123 events".
var bpftraceLost = regexp.MustCompile(`^Lost ([0-9]+) events`)

// countBpftrace reads the output of the script bpftraceProgram writes:
// "open PID RET PATH", "execve PID PATH", "connect PID FD", one line per
// event, plus bpftrace's own "Attaching N probes..." and "Lost N events".
func countBpftrace(r io.Reader) (counts, error) {
	c := counts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if m := bpftraceLost.FindStringSubmatch(line); m != nil {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				return c, fmt.Errorf("bpftrace output: %q: %v", line, err)
			}
			c.Lost += n
			continue
		}
		f := strings.SplitN(line, " ", 4)
		switch {
		case f[0] == "open" && len(f) == 4:
			c.SetEvents++
			if extractedFile.MatchString(f[3]) {
				c.FileOpens++
			}
		case (f[0] == "execve" || f[0] == "connect") && len(f) >= 3:
			c.SetEvents++
		}
	}
	return c, sc.Err()
}

// countAudit reads an audit log (RAW or ENRICHED format) and counts the
// SYSCALL records carrying key; a record is a file open when one of the
// PATH records of the same event (same serial in msg=audit(TIME:SERIAL))
// names a file of the archive. Other records with the key (CONFIG_CHANGE
// when the rule is added) are not events of the workload.
func countAudit(r io.Reader, key string) (counts, error) {
	c := counts{Lost: -1}
	keyField := []byte(` key="` + key + `"`)
	keyed := map[string]bool{}      // serials of SYSCALL records with key
	fileSerial := map[string]bool{} // serials with a PATH on an archive file
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		// ENRICHED appends the interpreted fields after a GS (0x1d).
		if i := bytes.IndexByte(line, 0x1d); i >= 0 {
			line = line[:i]
		}
		typ, serial, ok := auditHeader(line)
		if !ok {
			continue
		}
		switch typ {
		case "SYSCALL":
			if bytes.Contains(line, keyField) {
				keyed[serial] = true
			}
		case "PATH":
			if name, ok := auditField(line, "name"); ok && extractedFile.MatchString(name) {
				fileSerial[serial] = true
			}
		}
	}
	c.SetEvents = len(keyed)
	for s := range fileSerial {
		if keyed[s] {
			c.FileOpens++
		}
	}
	return c, sc.Err()
}

// auditHeader splits "type=T msg=audit(SECONDS.MILLIS:SERIAL): ..." into T
// and SERIAL.
func auditHeader(line []byte) (typ, serial string, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte("type="))
	if !found {
		return "", "", false
	}
	t, rest, found := bytes.Cut(rest, []byte(" msg=audit("))
	if !found {
		return "", "", false
	}
	stamp, _, found := bytes.Cut(rest, []byte("):"))
	if !found {
		return "", "", false
	}
	_, s, found := bytes.Cut(stamp, []byte(":"))
	if !found {
		return "", "", false
	}
	return string(t), string(s), true
}

// auditField returns the value of field name in an audit record: a quoted
// string, or an unquoted value, which for names is hex-encoded bytes (the
// kernel does that when a name holds a space, quote or control byte).
func auditField(line []byte, name string) (string, bool) {
	i := bytes.Index(line, []byte(" "+name+"="))
	if i < 0 {
		return "", false
	}
	v := line[i+len(name)+2:]
	if len(v) > 0 && v[0] == '"' {
		end := bytes.IndexByte(v[1:], '"')
		if end < 0 {
			return "", false
		}
		return string(v[1 : 1+end]), true
	}
	if end := bytes.IndexByte(v, ' '); end >= 0 {
		v = v[:end]
	}
	if string(v) == "(null)" {
		return "", false
	}
	b := make([]byte, len(v)/2)
	for j := range b {
		x, err := strconv.ParseUint(string(v[2*j:2*j+2]), 16, 8)
		if err != nil {
			return string(v), true
		}
		b[j] = byte(x)
	}
	return string(b), true
}

// countVigil counts a vigil archive's kernel events of the traced set.
// An open counts as a file open when the file the kernel resolved (or,
// for a failed open, the name passed) is a file of the archive. Lost is
// what the capture could not emit (ring-buffer drops).
func countVigil(b *evidence.Bundle) counts {
	c := counts{Lost: int64(b.Health.RingbufDrops.Total)}
	for i := range b.Kernel {
		e := &b.Kernel[i]
		switch e.Kind {
		case wire.KindOpen:
			c.SetEvents++
			if e.Open == nil {
				continue
			}
			p := string(e.Open.Name.Requested)
			if e.Open.File != nil {
				p = string(e.Open.File.Path)
			}
			if extractedFile.MatchString(p) {
				c.FileOpens++
			}
		case wire.KindExec, wire.KindExecFailed, wire.KindConnect:
			c.SetEvents++
		}
	}
	return c
}

func isTraced(name string) bool {
	for _, s := range tracedSyscalls {
		if name == s {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// firstQuoted returns the first double-quoted string of strace's argument
// list, unescaping nothing: archive names need no escapes.
func firstQuoted(s string) (string, bool) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return "", false
	}
	return s[i+1 : i+1+j], true
}

// straceProfile is strace -c's table: calls and errors per syscall.
type straceProfile struct {
	Calls  map[string]int `json:"calls"`
	Errors map[string]int `json:"errors"`
}

// parseStraceSummary reads strace -c -U calls,errors,name output. A zero
// error count is printed as a blank column.
func parseStraceSummary(r io.Reader) (straceProfile, error) {
	p := straceProfile{Calls: map[string]int{}, Errors: map[string]int{}}
	sc := bufio.NewScanner(r)
	rows := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || len(f) > 3 || f[len(f)-1] == "total" || f[0] == "calls" {
			continue
		}
		calls, err := strconv.Atoi(f[0])
		if err != nil {
			continue // separator lines
		}
		name := f[len(f)-1]
		p.Calls[name] = calls
		if len(f) == 3 {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return p, fmt.Errorf("strace -c output: errors column %q", f[1])
			}
			p.Errors[name] = n
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if rows == 0 {
		return p, fmt.Errorf("strace -c output: no syscall rows")
	}
	return p, nil
}
