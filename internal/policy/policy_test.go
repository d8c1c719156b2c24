package policy

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestParseRejectsBadPolicies(t *testing.T) {
	head := "schema: vigil.policy/v1\ndefault: deny\n"
	cases := []struct{ doc, want string }{
		{"schema: [", "not YAML or JSON"},
		{"schema: vigil.policy/v2\ndefault: deny\nrules: []\n", "/schema"},
		{"schema: vigil.policy/v1\nrules: []\n", "default"},
		{head + "rules: []\nextra: 1\n", `unknown field "extra"`},
		{"schema: vigil.policy/v1\ndefualt: deny\nrules: []\n", `unknown field "defualt"`},
		{head + "default: allow\nrules: []\n", "already set"},
		{"", "empty"},
		{"# only a comment\n", "empty"},
		{head + "rules:\n- {name: n, action: allow}\n", "quote the value"},
		{head + "rules:\n- {name: a, action: allow, ops: [teleport]}\n", "/rules/0/ops/0"},
		{head + "rules:\n- {name: a, action: maybe}\n", "/rules/0/action"},
		{head + "rules:\n- {name: a, action: allow}\n- {name: a, action: deny}\n", `rule "a": the name is used twice`},
		{head + "rules:\n- {name: a, action: allow, paths: ['/x/[']}\n", `path "/x/["`},
		{head + "rules:\n- {name: a, action: allow, paths: ['etc/**']}\n", "must be absolute"},
		{head + "rules:\n- {name: a, action: allow, endpoints: ['127.0.0.1']}\n", `endpoint "127.0.0.1"`},
		{head + "rules:\n- {name: a, action: allow, endpoints: ['::1:53']}\n", "brackets"},
		{head + "rules:\n- {name: a, action: allow, endpoints: ['10.0.0.0/33:1']}\n", `address "10.0.0.0/33"`},
		{head + "rules:\n- {name: a, action: allow, endpoints: ['10.0.0.1:70000']}\n", `port "70000"`},
		{head + "rules:\n- {name: a, action: allow, endpoints: ['10.0.0.1:9-3']}\n", `port "9-3"`},
		{head + "rules:\n- {name: a, action: allow, ops: [connect], paths: ['/x']}\n", "only network operations"},
		{head + "rules:\n- {name: a, action: allow, ops: [read], endpoints: ['*:*']}\n", "lists none"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc))
		if err == nil {
			t.Errorf("accepted:\n%s", c.doc)
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q: want one line containing %q", err, c.want)
		}
		if strings.HasPrefix(err.Error(), "json: ") {
			t.Errorf("error %q speaks of JSON about a YAML document", err)
		}
	}
	// JSON is YAML too.
	if _, err := Parse([]byte(`{"schema":"vigil.policy/v1","default":"allow","rules":[]}`)); err != nil {
		t.Errorf("JSON policy: %v", err)
	}
}

func TestEndpointPatterns(t *testing.T) {
	ep := func(fam, addr string, port uint16) evidence.Endpoint {
		return evidence.Endpoint{Family: fam, Addr: wire.Bytes(addr), Port: port}
	}
	cases := []struct {
		pattern string
		ep      evidence.Endpoint
		want    bool
	}{
		{"127.0.0.1:4318", ep("inet", "127.0.0.1", 4318), true},
		{"127.0.0.1:4318", ep("inet", "127.0.0.1", 4319), false},
		{"127.0.0.0/8:*", ep("inet", "127.9.9.9", 1), true},
		{"127.0.0.0/8:*", ep("inet", "10.0.0.1", 1), false},
		{"127.0.0.0/8:*", ep("inet6", "::ffff:127.0.0.1", 80), true},
		{"10.0.0.0/8:8000-8999", ep("inet", "10.1.2.3", 8080), true},
		{"10.0.0.0/8:8000-8999", ep("inet", "10.1.2.3", 9000), false},
		{"[::1]:53", ep("inet6", "::1", 53), true},
		{"[::1]:53", ep("inet", "127.0.0.1", 53), false},
		{"[fd00::/8]:*", ep("inet6", "fd12::1", 443), true},
		{"*:443", ep("inet6", "2001:db8::1", 443), true},
		{"*:443", ep("unix", "/run/x", 0), false},
		{"unix:/run/**", ep("unix", "/run/user/0/bus", 0), true},
		{"unix:/run/**", ep("unix", "@abstract", 0), false},
		{"unix:@*", ep("unix", "@abstract", 0), true},
		{"127.0.0.1:*", ep("unix", "/run/x", 0), false},
	}
	for _, c := range cases {
		p, err := parseEndpoint(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := p.match(c.ep); got != c.want {
			t.Errorf("%s matches %v: %v, want %v", c.pattern, c.ep, got, c.want)
		}
	}
}

const workspacePolicy = `schema: vigil.policy/v1
description: the agent may work in its workspace and talk to its collector
default: deny
rules:
  - name: agent-binary
    action: allow
    ops: [exec]
    paths: [/usr/bin/agent]
  - name: workspace
    action: allow
    ops: [read, write, create, delete, mkdir, rename]
    paths: ["/home/agent/work/**"]
  - name: collector
    action: allow
    ops: [connect]
    endpoints: ["127.0.0.1:4318"]
`

// fullyCovered marks every kind covered, as a record on a host with
// every hook attached says.
func fullyCovered(b *evidence.Bundle) *evidence.Bundle {
	b.Health.Coverage.Covered = nil
	for _, k := range wire.Kinds {
		b.Health.Coverage.Covered = append(b.Health.Coverage.Covered, wire.CoveredClass{Class: string(k), Hook: "tp_btf/x", Attached: true})
	}
	return b
}

// withExtra is the fixture run with extra events, fully covered.
func withExtra(n, calls int, extra ...wire.Kernel) *evidence.Bundle {
	return fullyCovered(evidencetest.WithExtra(n, calls, "", extra...))
}

func must(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p.Source = "test.yaml"
	return p
}

func TestCheckPassesTheNormalRun(t *testing.T) {
	b := withExtra(40, 2)
	r := Check(b, must(t, workspacePolicy))
	if r.Status != StatusPass || len(r.Violations) != 0 || !r.Complete {
		t.Fatalf("%s", r.Text())
	}
	// The failed open of /etc/missing is not judged by default.
	if r.FailedSkipped != 1 || r.ActionsChecked == 0 || r.Allowed != r.ActionsChecked {
		t.Errorf("checked %d allowed %d failed-skipped %d", r.ActionsChecked, r.Allowed, r.FailedSkipped)
	}
}

func TestCheckFindsTheViolations(t *testing.T) {
	passwd := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100, File: &wire.ResolvedPath{Path: "/etc/passwd"},
		Name: wire.Name{Requested: "/etc/passwd"}, Ret: 3, Access: wire.AccessRead}}
	conn := wire.Kernel{Kind: wire.KindConnect, Net: &wire.Net{Fd: 7, Family: "inet", Addr: "127.0.0.1", Port: 9999,
		AddrFrom: "socket", SockType: "stream", Syscall: "connect", Ret: 0}}
	b := withExtra(40, 2, passwd, conn, passwd)
	last := b.Kernel[len(b.Kernel)-1].Seq
	r := Check(b, must(t, workspacePolicy))
	if r.Status != StatusFail || len(r.Violations) != 2 {
		t.Fatalf("%s", r.Text())
	}
	v := r.Violations[0]
	if v.Rule != DefaultRule || v.Op != "read" || v.Object != "/etc/passwd" || len(v.Events) != 2 ||
		v.Events[0].Seq != last-2 || v.Events[1].Seq != last || v.Events[0].PID != 4242 {
		t.Errorf("first violation: %+v", v)
	}
	if v := r.Violations[1]; v.Op != "connect" || v.Object != "inet:127.0.0.1:9999" || v.Events[0].Seq != last-1 {
		t.Errorf("second violation: %+v", v)
	}
	data, _ := json.Marshal(r)
	if err := wire.Validate("policy-check", data); err != nil {
		t.Errorf("JSON against its schema: %v", err)
	}
	// A deny rule before the allow rules names itself.
	denyEtc := strings.Replace(workspacePolicy, "rules:\n", "rules:\n  - name: no-etc\n    action: deny\n    paths: [\"/etc/**\"]\n", 1)
	if r := Check(b, must(t, denyEtc)); r.Violations[0].Rule != "no-etc" {
		t.Errorf("rule %q, want no-etc", r.Violations[0].Rule)
	}
}

func TestCheckAttemptsAndToolScope(t *testing.T) {
	b := withExtra(40, 2)
	attempts := strings.Replace(workspacePolicy, "default: deny\n", "default: deny\nattempts: true\n", 1)
	r := Check(b, must(t, attempts))
	if len(r.Violations) != 1 || r.Violations[0].Object != "/etc/missing" || !r.Violations[0].Events[0].Failed || r.FailedSkipped != 0 {
		t.Fatalf("%s", r.Text())
	}
	// Workspace writes only inside write_file calls: a write after both
	// windows becomes a violation, those inside stay allowed.
	late := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100, File: &wire.ResolvedPath{Path: "/home/agent/work/late"},
		Name: wire.Name{Requested: "/home/agent/work/late"}, Ret: 3, Access: wire.AccessWrite}}
	b = withExtra(40, 2, late)
	scoped := strings.Replace(workspacePolicy, "    ops: [read, write, create, delete, mkdir, rename]\n", "    ops: [read, write, create, delete, mkdir, rename]\n    tool: write_file\n", 1)
	r = Check(b, must(t, scoped))
	inside := 0
	for _, v := range r.Violations {
		for _, e := range v.Events {
			if len(e.ToolCalls) > 0 {
				t.Errorf("event %d inside tool call %v denied", e.Seq, e.ToolCalls)
			}
		}
	}
	for _, tc := range b.Correlation.ToolCalls {
		inside += int(tc.Kernel.Total)
	}
	if r.Status != StatusFail || inside == 0 || len(r.Violations) != 1 || r.Violations[0].Object != "/home/agent/work/late" {
		t.Fatalf("status %s, %d events inside calls\n%s", r.Status, inside, r.Text())
	}
}

func TestCheckCannotPassAnIncompleteRecord(t *testing.T) {
	b := withExtra(40, 2)
	b.Health.KernelLayer.Status = wire.LayerPartial
	r := Check(b, must(t, workspacePolicy))
	if r.Status != StatusIncomplete || r.Complete || r.Summary != "no violation seen in an incomplete record" {
		t.Fatalf("%s", r.Text())
	}
	// A class the policy could deny that the record does not cover.
	b = withExtra(40, 2)
	b.Health.Coverage.Covered = b.Health.Coverage.Covered[1:] // drops the first kind
	r = Check(b, must(t, workspacePolicy))
	if r.Status != StatusIncomplete || len(r.IncompleteReasons) == 0 {
		t.Fatalf("%s", r.Text())
	}
	// An allow-by-default policy that denies only exec needs only exec.
	onlyExec := "schema: vigil.policy/v1\ndefault: allow\nrules:\n- {name: no-sh, action: deny, ops: [exec], paths: [/bin/sh]}\n"
	b = withExtra(40, 2)
	b.Health.Coverage.Covered = []wire.CoveredClass{{Class: "exec", Attached: true}, {Class: "exec_failed", Attached: true}}
	if r := Check(b, must(t, onlyExec)); r.Status != StatusPass {
		t.Errorf("%s", r.Text())
	}
}

// An io_uring operation whose object the capture does not decode is an
// action the record cannot show: the check says so, counted per operation,
// and for failed ones only when attempts are judged.
func TestCheckCannotPassUndecodedIOUring(t *testing.T) {
	ring := func(op string, opcode uint32, res int64) wire.Kernel {
		return wire.Kernel{Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
			IOUring: &wire.IOUring{Opcode: opcode, Op: op, Res: res}}
	}
	b := withExtra(40, 2, ring("unlinkat", 36, 0), ring("unlinkat", 36, 0), ring("read", 22, 5), ring("openat", 18, -2), ring("op_250", 250, 0))
	r := Check(b, must(t, workspacePolicy))
	want := []string{
		"delete: 2 io_uring unlinkat event(s) whose object is not recorded",
		"1 io_uring op_250 event(s) of an operation vigil cannot name: what they did is not recorded",
	}
	if r.Status != StatusIncomplete || r.Complete || !slices.Equal(r.IncompleteReasons, want) {
		t.Fatalf("reasons %q, want %q\n%s", r.IncompleteReasons, want, r.Text())
	}
	// Judging attempts, the failed io_uring open (whose name is not
	// read) could have been a denied read, write or create.
	attempts := strings.Replace(workspacePolicy, "default: deny\n", "default: deny\nattempts: true\n", 1)
	r = Check(b, must(t, attempts))
	for _, reason := range []string{"read: 1 io_uring openat event(s) whose object is not recorded",
		"write: 1 io_uring openat event(s) whose object is not recorded", "create: 1 io_uring openat event(s) whose object is not recorded"} {
		if !slices.Contains(r.IncompleteReasons, reason) {
			t.Errorf("attempts judged: reasons %q lack %q", r.IncompleteReasons, reason)
		}
	}
	// A policy that can deny only exec needs none of that.
	onlyExec := "schema: vigil.policy/v1\ndefault: allow\nrules:\n- {name: no-sh, action: deny, ops: [exec], paths: [/bin/sh]}\n"
	b = withExtra(40, 2, ring("unlinkat", 36, 0))
	if r := Check(b, must(t, onlyExec)); r.Status != StatusPass {
		t.Errorf("%s", r.Text())
	}
	// On a host that cannot count completions skipping the hook, an
	// operation io_uring can do is not complete; exec still is.
	b = withExtra(40, 2)
	b.Health.Coverage.NotCovered = append(b.Health.Coverage.NotCovered, wire.UncoveredClass{Class: wire.UncoveredIOUringUntraced, Why: "old kernel"})
	r = Check(b, must(t, workspacePolicy))
	if r.Status != StatusIncomplete || !slices.Contains(r.IncompleteReasons, "delete: io_uring requests that skip the completion hook are neither recorded nor counted on this host (io_uring_untraced)") {
		t.Errorf("reasons %q", r.IncompleteReasons)
	}
	if r := Check(b, must(t, onlyExec)); r.Status != StatusPass {
		t.Errorf("exec-only policy: %s", r.Text())
	}
}

// A record whose io_uring hook did not attach (a kernel whose
// io_uring_complete the capture cannot read) cannot show an io_uring
// delete or connect, so a policy denying either is not passed; exec is
// still judged.
func TestCheckWithoutIOUringHook(t *testing.T) {
	b := withExtra(40, 2)
	for i, c := range b.Health.Coverage.Covered {
		if c.Class == string(wire.KindIOUring) {
			b.Health.Coverage.Covered[i].Attached = false
		}
	}
	r := Check(b, must(t, workspacePolicy))
	for _, reason := range []string{"delete: event kind io_uring is not covered by this record", "connect: event kind io_uring is not covered by this record"} {
		if r.Status != StatusIncomplete || !slices.Contains(r.IncompleteReasons, reason) {
			t.Errorf("reasons %q lack %q", r.IncompleteReasons, reason)
		}
	}
	onlyExec := "schema: vigil.policy/v1\ndefault: allow\nrules:\n- {name: no-sh, action: deny, ops: [exec], paths: [/bin/sh]}\n"
	if r := Check(b, must(t, onlyExec)); r.Status != StatusPass {
		t.Errorf("exec-only policy: %s", r.Text())
	}
}

// An io_uring unlinkat with its name is judged like unlinkat(2): a denied
// path is a violation, not an unseen action.
func TestCheckJudgesIOUringUnlink(t *testing.T) {
	b := withExtra(40, 2, wire.Kernel{Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
		IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Name: &wire.Name{Requested: "/etc/passwd"}}})
	r := Check(b, must(t, workspacePolicy))
	if r.Status != StatusFail || !strings.Contains(r.Text(), "delete /etc/passwd") {
		t.Errorf("want a violation naming the deleted file:\n%s", r.Text())
	}
	for _, reason := range r.IncompleteReasons {
		if strings.Contains(reason, "io_uring") {
			t.Errorf("decoded io_uring requests counted as unseen: %q", reason)
		}
	}
}

// The SARIF log validates against the OASIS SARIF 2.1.0 schema, as
// published in a Go module's test data.
func TestSARIFValidatesAgainstTheStandardSchema(t *testing.T) {
	path := testenv.ModuleFile(t, "github.com/securego/gosec/v2", "v2.30.0", "report/sarif/testdata/sarif-schema-2.1.0.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	if bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version":"2.1.0","runs":[{"results":[]}]}`)); sch.Validate(bad) == nil {
		t.Fatal("the SARIF schema accepts a run without a tool")
	}
	conn := wire.Kernel{Kind: wire.KindConnect, Net: &wire.Net{Fd: 7, Family: "inet", Addr: "127.0.0.1", Port: 9999,
		AddrFrom: "socket", SockType: "stream", Syscall: "connect", Ret: 0}}
	passwd := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100, File: &wire.ResolvedPath{Path: "/etc/pass wd"},
		Name: wire.Name{Requested: "/etc/pass wd"}, Ret: 3, Access: wire.AccessRead}}
	for _, partial := range []bool{false, true} {
		b := withExtra(40, 2, conn, passwd)
		if partial {
			b.Health.KernelLayer.Status = wire.LayerPartial
		}
		p := must(t, workspacePolicy)
		r := Check(b, p)
		data, err := json.Marshal(r.SARIF(p, "0.1.0-test"))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("SARIF log does not validate: %v\n%s", err, data)
		}
		s := string(data)
		if !strings.Contains(s, `"uri":"file:///etc/pass%20wd"`) || !strings.Contains(s, `"kind":"endpoint"`) {
			t.Errorf("locations: %s", s)
		}
		if partial != strings.Contains(s, "toolExecutionNotifications") {
			t.Errorf("partial %v, notification present %v", partial, !partial)
		}
	}
}
