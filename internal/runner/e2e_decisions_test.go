//go:build linux

package runner

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rundiff "vigil/internal/diff"
	"vigil/internal/policy"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// agentPolicy is the example policy the README points to.
var agentPolicy, _ = filepath.Abs("../../examples/agent-workspace.policy.yaml")

// recordAgent records `vigil agent` (after an optional shell tail run by
// bash in the same run). Callers set TMPDIR=/tmp, where the example
// policy expects the agent's workspace.
func recordAgent(t *testing.T, dir, name string, knobs []string, tail string) string {
	t.Helper()
	arc := filepath.Join(dir, name+".tar.gz")
	agent := append([]string{testenv.Vigil(t), "agent"}, knobs...)
	args := []string{"record", "--archive", arc, "--"}
	if tail == "" {
		args = append(args, agent...)
	} else {
		args = append(args, "bash", "-c", `"$@" >/dev/null && `+tail, "bash")
		args = append(args, agent...)
	}
	r := runVigil(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("record %s: exit %d: %s", name, r.code, r.stderr)
	}
	return arc
}

// Two agent runs with different knobs differ exactly in the number of
// worker files; a run against itself does not differ.
func TestE2EDiffOfAgentRuns(t *testing.T) {
	testenv.RequireRoot(t)
	t.Setenv("TMPDIR", "/tmp") // the example policy's workspace
	dir := t.TempDir()
	a := recordAgent(t, dir, "a", []string{"--kernel-events", "3"}, "")
	b := recordAgent(t, dir, "b", []string{"--kernel-events", "6"}, "")
	if r := runVigil(t, dir, "diff", a, a); r.code != 0 || !strings.Contains(r.stdout, "no differences") {
		t.Fatalf("diff of a run against itself: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runVigil(t, dir, "diff", "--json", a, b)
	if r.code != 1 {
		t.Fatalf("diff of different runs: exit %d\n%s", r.code, r.stderr)
	}
	var res rundiff.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Incomplete || len(res.Health) != 0 || !res.ToolCallsCompared || len(res.ToolCalls) != 0 || len(res.Sections) == 0 {
		t.Fatalf("diff: %s", r.stdout)
	}
	for _, s := range res.Sections {
		if len(s.Added)+len(s.Removed) != 0 || len(s.Changed) != 1 || !strings.HasSuffix(s.Changed[0].Object, "/workers/w-{n}") ||
			s.Changed[0].A != 3 || s.Changed[0].B != 6 {
			t.Errorf("section %s: %+v (want only the worker files, 3 -> 6)", s.Name, s)
		}
	}
	t.Logf("vigil diff a b:\n%s", runVigil(t, dir, "diff", a, b).stdout)
}

// The example policy passes the normal agent run and fails, with the
// right events, a run that also reads /etc/passwd and connects to a
// loopback port; the run page shows the run.
func TestE2EPolicyAndRunPage(t *testing.T) {
	testenv.RequireRoot(t)
	t.Setenv("TMPDIR", "/tmp") // the example policy's workspace
	dir := t.TempDir()
	normal := recordAgent(t, dir, "normal", nil, "")
	if r := runVigil(t, dir, "check", "--policy", agentPolicy, normal); r.code != 0 {
		t.Fatalf("normal agent run against the example policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	bad := recordAgent(t, dir, "bad", nil, fmt.Sprintf("cat /etc/passwd >/dev/null && exec 3<>/dev/tcp/127.0.0.1/%d", port))
	r := runVigil(t, dir, "check", "--policy", agentPolicy, "--format", "json", bad)
	if r.code != 1 {
		t.Fatalf("misbehaving run: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res policy.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	b := verifyAndRead(t, bad)
	bySeq := map[uint64]wire.Kernel{}
	for _, e := range b.Kernel {
		bySeq[e.Seq] = e
	}
	var passwd, conn bool
	for _, v := range res.Violations {
		// bash itself may read /etc/passwd too (a shell without HOME
		// looks its user up), so look for cat's read among the events.
		for _, ev := range v.Events {
			e := bySeq[ev.Seq]
			switch {
			case v.Op == "read" && v.Object == "/etc/passwd":
				passwd = passwd || v.Rule == policy.DefaultRule && e.Open != nil && string(e.Open.File.Path) == "/etc/passwd" && ev.Comm == "cat"
			case v.Op == "connect" && v.Object == fmt.Sprintf("inet:127.0.0.1:%d", port):
				conn = conn || e.Net != nil && int(e.Net.Port) == port && ev.Comm == "bash"
			}
		}
		// Everything else denied is bash's and cat's own doing (their
		// exec, locale files, /dev/null); the agent stays inside.
		for _, ev := range v.Events {
			if ev.Comm != "bash" && ev.Comm != "cat" {
				t.Errorf("violation by %s: %+v", ev.Comm, v)
			}
		}
	}
	if !passwd || !conn {
		t.Errorf("violations: read /etc/passwd by cat found %v, connect to port %d by bash found %v\n%s", passwd, port, conn,
			runVigil(t, dir, "check", "--policy", agentPolicy, bad).stdout)
	}

	page := filepath.Join(dir, "bad.html")
	if r := runVigil(t, dir, "inspect", "--html", page, bad); r.code != 0 {
		t.Fatalf("inspect --html: exit %d %s", r.code, r.stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-tool-calls="2"`, "/etc/passwd", fmt.Sprintf("inet:127.0.0.1:%d", port), "write_file"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("run page lacks %q", want)
		}
	}
}
