//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestRecordBadInput(t *testing.T) {
	testenv.RequireRoot(t)
	badInterp := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(badInterp, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*Options)
		code int
	}{
		{"no command", func(o *Options) { o.Argv = nil }, ExitFailure},
		{"no archive", func(o *Options) { o.ArchivePath = "" }, ExitFailure},
		{"archive dir missing", func(o *Options) { o.ArchivePath = "/nonexistent/dir/a.tar.gz" }, ExitFailure},
		{"archive is a dir", func(o *Options) { o.ArchivePath = t.TempDir() }, ExitFailure},
		{"bad run id", func(o *Options) { o.RunID = "../x" }, ExitFailure},
		{"negative grace", func(o *Options) { o.Grace = -1 }, ExitFailure},
		{"argument not UTF-8", func(o *Options) { o.Argv = []string{"true", "bad\xff"} }, ExitFailure},
		{"not found", func(o *Options) { o.Argv = []string{"vigil-no-such-command"} }, ExitNotFound},
		{"not executable", func(o *Options) { o.Argv = []string{notExec} }, ExitCannotExecute},
		// execve itself fails, after the session exists.
		{"bad interpreter", func(o *Options) { o.Argv = []string{badInterp} }, ExitNotFound},
		{"preflight", func(o *Options) { o.Backend = &fakeBackend{preflightErr: errors.New("no BTF")} }, ExitFailure},
		{"attach", func(o *Options) { o.Backend = &fakeBackend{openErr: errors.New("attach failed")} }, ExitFailure},
		// The child has run; a failed drain still leaves nothing behind.
		{"drain", func(o *Options) { o.Backend = &fakeBackend{finishErr: errors.New("ring unreadable")} }, ExitFailure},
		{"archive write", func(o *Options) {
			o.WriteArchive = func(p string, b *evidence.Bundle, _ *archive.KernelLayer) error {
				os.WriteFile(p, []byte("partial"), 0o644)
				return errors.New("disk full")
			}
		}, ExitFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := fakeOptions(t, &fakeBackend{}, "true")
			c.edit(&o)
			_, err := Record(context.Background(), o)
			wantCode(t, err, c.code)
			t.Log(err)
			if st, err := os.Stat(o.ArchivePath); err == nil && !st.IsDir() {
				t.Error("archive written despite failure")
			}
			if c.name != "archive is a dir" && o.ArchivePath != "" {
				// Nothing else (temporary archive, probe file) either.
				assertOnlyFiles(t, filepath.Dir(o.ArchivePath))
			}
			assertNoSession(t, o.RunID)
		})
	}
}

func TestRecordAllowAbsentKernel(t *testing.T) {
	testenv.RequireRoot(t)
	for name, b := range map[string]*fakeBackend{
		"preflight": {preflightErr: errors.New("no BTF")},
		"attach":    {openErr: errors.New("attach failed")},
	} {
		t.Run(name, func(t *testing.T) {
			o := fakeOptions(t, b, "sh", "-c", "exit 5")
			o.AllowAbsentKernel = true
			res, err := Record(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 5 {
				t.Fatalf("exit %d", res.ExitCode)
			}
			h := readJSONArchive(t, o.ArchivePath).Health
			if h.KernelLayer.Status != wire.LayerAbsent || h.KernelLayer.CaptureAvailable || h.KernelLayer.AbsentReason == "" {
				t.Fatalf("kernel layer %+v: want absent with a reason", h.KernelLayer)
			}
			assertNoSession(t, o.RunID)
		})
	}
}

func TestRecordUserSDKLogTruncated(t *testing.T) {
	testenv.RequireRoot(t)
	o := fakeOptions(t, &fakeBackend{}, "true")
	o.SDKEventLogPath = filepath.Join(t.TempDir(), "sdk.ndjson")
	os.WriteFile(o.SDKEventLogPath, []byte("stale line from an earlier run\n"), 0o644)
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	h := readJSONArchive(t, o.ArchivePath).Health
	if h.SDKLayer.Status != wire.SDKAbsent {
		t.Fatalf("sdk layer %+v: an earlier run's log leaked into this one", h.SDKLayer)
	}
	if _, err := os.Stat(o.SDKEventLogPath); err != nil {
		t.Fatal("user's SDK log path removed")
	}
}

func TestRecordSDKLogIngested(t *testing.T) {
	testenv.RequireRoot(t)
	o := fakeOptions(t, &fakeBackend{}, "sh", "-c", `echo '{"not":"an sdk event"}' >> "$VIGIL_SDK_EVENT_LOG"`)
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	h := readJSONArchive(t, o.ArchivePath).Health
	if h.SDKLayer.Status != wire.SDKInvalid || len(h.SDKLayer.Problems) == 0 {
		t.Fatalf("sdk layer %+v: want invalid with problems", h.SDKLayer)
	}
}

// TestRecordAbandonedKillsEverything: a run that fails while the command
// and a detached grandchild are running leaves no process, no session and
// no archive behind.
func TestRecordAbandonedKillsEverything(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(dir, "pids")
	o := fakeOptions(t, &fakeBackend{},
		"sh", "-c", `(setsid sleep 60 & echo $! >> "$1") ; echo $$ >> "$1"; echo go > "$0"; exec sleep 60`, ready, pids)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Record(ctx, o)
		errc <- err
	}()
	if _, err := os.ReadFile(ready); err != nil {
		t.Fatal(err)
	}
	cancel()
	wantCode(t, <-errc, ExitFailure)
	data, _ := os.ReadFile(pids)
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		t.Fatalf("pids file %q", data)
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		// Reaped (by us or by init) or at least dead: kill(0) fails, or
		// the process is a zombie awaiting its reaper.
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("process %d still running", pid)
		}
	}
	if _, err := os.Stat(o.ArchivePath); err == nil {
		t.Error("archive written for an abandoned run")
	}
	assertNoSession(t, o.RunID)
}

// zombie reports whether pid has exited and awaits reaping.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestRecordTeardownErrorNotSwallowed: when the run already failed and
// teardown then fails too, both reach the caller; the second is not
// dropped because the first was reported.
func TestRecordTeardownErrorNotSwallowed(t *testing.T) {
	testenv.RequireRoot(t)
	b := &fakeBackend{finishErr: errors.New("ring unreadable"), closeErr: errors.New("probe detach failed")}
	o := fakeOptions(t, b, "true")
	var log strings.Builder
	o.Log = &log
	_, err := Record(context.Background(), o)
	wantCode(t, err, ExitFailure)
	if !strings.Contains(err.Error(), "ring unreadable") {
		t.Errorf("error %q lacks the drain failure", err)
	}
	if !strings.Contains(err.Error()+log.String(), "probe detach failed") {
		t.Errorf("teardown failure reported nowhere: error %q, log %q", err, log.String())
	}
	assertNoSession(t, o.RunID)
}

// TestRecordBadRingSizeIsBadInput: an invalid --ring-size is the user's
// mistake, refused up front; --allow-absent-kernel must not turn it into a
// run without kernel capture.
func TestRecordBadRingSizeIsBadInput(t *testing.T) {
	testenv.RequireRoot(t)
	for _, allow := range []bool{false, true} {
		o := fakeOptions(t, nil, "true")
		o.Backend = nil // the eBPF capture, which defines valid sizes
		o.RingSize = 5000
		o.AllowAbsentKernel = allow
		res, err := Record(context.Background(), o)
		if err == nil {
			t.Fatalf("allow-absent-kernel=%v: ring size 5000 accepted (kernel layer %q)", allow, res.Health.KernelLayer.Status)
		}
		wantCode(t, err, ExitFailure)
		if !strings.Contains(err.Error(), "ring") {
			t.Errorf("error %q does not name the ring size", err)
		}
		assertOnlyFiles(t, filepath.Dir(o.ArchivePath))
		assertNoSession(t, o.RunID)
	}
}
