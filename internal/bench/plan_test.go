//go:build linux

package bench

import (
	"reflect"
	"strings"
	"testing"

	"vigil/internal/wire"
)

func TestPresetsMatchSpec(t *testing.T) {
	want := map[string][4]int{ // kernel, span, concurrency, payload
		"control": {0, 0, 1, 128}, "k100": {100, 0, 1, 128}, "k500": {500, 0, 1, 128}, "x500": {500, 0, 1, 128},
		"k1000": {1000, 0, 1, 128}, "x1000": {1000, 0, 1, 128}, "s100": {0, 100, 1, 128}, "s500": {0, 500, 1, 128},
		"s1000": {0, 1000, 1, 128}, "kc1000": {1000, 0, 16, 128}, "corner": {100, 100, 4, 65536},
		"corner-lite": {1000, 1000, 8, 65536},
	}
	if len(Presets) != len(want) {
		t.Fatalf("%d presets, want %d", len(Presets), len(want))
	}
	for name, w := range want {
		c, ok := Presets[name]
		if !ok {
			t.Fatalf("preset %s missing", name)
		}
		got := [4]int{c.KernelEvents, c.SpanEvents, c.Concurrency, c.PayloadBytes}
		if got != w || c.Name != name {
			t.Errorf("%s = %+v, want %v", name, c, w)
		}
	}
}

func TestParseCellSpec(t *testing.T) {
	c, err := ParseCellSpec("big:kernel=5000,span=7,conc=4,payload=medium")
	if err != nil {
		t.Fatal(err)
	}
	if c != (wire.Cell{Name: "big", KernelEvents: 5000, SpanEvents: 7, Concurrency: 4, PayloadBytes: 4096}) {
		t.Fatalf("got %+v", c)
	}
	c, err = ParseCellSpec("tiny:span=3")
	if err != nil || c.Concurrency != DefaultConcurrency || c.PayloadBytes != DefaultPayloadBytes || c.SpanEvents != 3 {
		t.Fatalf("defaults not applied: %+v %v", c, err)
	}
	for _, bad := range []string{"nocolon", ":kernel=1", "x:kernel=-1", "x:conc=0", "x:foo=1", "x:kernel", "a b:kernel=1", "x:payload=huge"} {
		if _, err := ParseCellSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestResolveCells(t *testing.T) {
	cells, err := ResolveCells([]string{"control", "mine", "s500"}, []string{"mine:kernel=3", "other:span=2"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "control,mine,s500,other" {
		t.Fatalf("order %v", names)
	}
	for _, tc := range [][2][]string{
		{{"nope"}, nil}, {{"control", "control"}, nil}, {{"control"}, {"control:kernel=1"}}, {{}, nil},
		{{"a"}, {"a:kernel=1", "a:kernel=2"}},
	} {
		if _, err := ResolveCells(tc[0], tc[1]); err == nil {
			t.Errorf("ResolveCells(%v, %v) accepted", tc[0], tc[1])
		}
	}
}

func TestParseArmsRepeatsForNoiseFloor(t *testing.T) {
	labels, kinds, exports, err := ParseArms([]string{"A", "A", "bare", "a", "B", "b@Collector", "C@collector", "B@collector"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(labels, []string{"A", "A2", "bare", "A3", "B", "B@collector", "C@collector", "B@collector2"}) ||
		!reflect.DeepEqual(kinds, []wire.ArmKind{"A", "A", "bare", "A", "B", "B", "C", "B"}) ||
		!reflect.DeepEqual(exports, []string{"", "", "", "", "file", "collector", "collector", "collector"}) {
		t.Fatalf("labels %v kinds %v exports %v", labels, kinds, exports)
	}
	for _, bad := range [][]string{{"D"}, {""}, {"A@collector"}, {"B@jaeger"}, {"bare@collector"}} {
		if _, _, _, err := ParseArms(bad); err == nil {
			t.Errorf("arms %q accepted", bad)
		}
	}
}

// TestCollectorArmCommand: a collector arm's agent sends to the endpoint
// instead of writing a trace file.
func TestCollectorArmCommand(t *testing.T) {
	p := samplePaths{Work: "/w", Result: "/r", Archive: "/x", PhaseLog: "/p"}
	argv, _ := armCommand("vigil", "C", Presets["corner"], nil, p, "", "", "", "http://127.0.0.1:9/v1/traces")
	got := strings.Join(argv, " ")
	if !strings.Contains(got, "-- vigil agent --otel=true") || !strings.HasSuffix(got, "--otlp-endpoint http://127.0.0.1:9/v1/traces") || strings.Contains(got, "--trace-out") {
		t.Fatalf("collector arm C: %s", got)
	}
}

func TestArmCommands(t *testing.T) {
	p := samplePaths{Work: "/w", Result: "/r", Trace: "/t", Archive: "/x", PhaseLog: "/p"}
	cell := Presets["corner"]
	cases := map[wire.ArmKind]string{
		"bare": "vigil agent --otel=false --kernel-events 100 --span-events 100 --concurrency 4 --payload-bytes 65536 --work-dir /w --result-out /r",
		"A":    "vigil record --archive /x --phase-log /p --programs load -- vigil agent --otel=false --kernel-events 100 --span-events 100 --concurrency 4 --payload-bytes 65536 --work-dir /w --result-out /r",
		"B":    "vigil agent --otel=true --kernel-events 100 --span-events 100 --concurrency 4 --payload-bytes 65536 --work-dir /w --result-out /r --trace-out /t",
		"C":    "vigil record --archive /x --phase-log /p --programs load -- vigil agent --otel=true --kernel-events 100 --span-events 100 --concurrency 4 --payload-bytes 65536 --work-dir /w --result-out /r --trace-out /t",
	}
	for kind, want := range cases {
		argv, env := armCommand("vigil", kind, cell, nil, p, "", "", "", "")
		if got := strings.Join(argv, " "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", kind, got, want)
		}
		wantEnv := "OTEL_SDK_DISABLED=" + map[bool]string{true: "false", false: "true"}[kind == "B" || kind == "C"]
		if !reflect.DeepEqual(env, []string{wantEnv}) {
			t.Errorf("%s env %v, want %s", kind, env, wantEnv)
		}
	}
	argv, env := armCommand("vigil", "C", cell, []string{"my", "cmd"}, p, "", "", "", "")
	if strings.Join(argv, " ") != "vigil record --archive /x --phase-log /p --programs load -- my cmd" || env[0] != "OTEL_SDK_DISABLED=false" {
		t.Fatalf("user command C: %v %v", argv, env)
	}
	argv, env = armCommand("vigil", "bare", cell, []string{"my", "cmd"}, p, "", "", "", "")
	if strings.Join(argv, " ") != "my cmd" || env[0] != "OTEL_SDK_DISABLED=true" {
		t.Fatalf("user command bare: %v %v", argv, env)
	}
}

func testPlan(t *testing.T, opts Options) wire.Plan {
	t.Helper()
	if opts.Arms == nil {
		opts.Arms = []string{"bare", "A", "B", "C"}
	}
	if opts.Cells == nil {
		opts.Cells = []string{"control", "x1000"}
	}
	if opts.Blocks == 0 {
		opts.Blocks = 10
	}
	if opts.Order == "" {
		opts.Order = OrderRandom
	}
	opts.Given |= GivenSeed
	p, err := NewPlan(opts, HostInfo(), map[string]string{"vigil_bench": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewPlanRejectsBadFlags(t *testing.T) {
	base := Options{Arms: []string{"bare"}, Cells: []string{"control"}, Blocks: 1, Order: OrderRandom}
	for name, mut := range map[string]func(*Options){
		"blocks": func(o *Options) { o.Blocks = 0 }, "warmup": func(o *Options) { o.Warmup = -1 },
		"order": func(o *Options) { o.Order = "sorted" }, "reruns": func(o *Options) { o.MaxReruns = -1 },
		"shard": func(o *Options) { o.Shard = "3/2" }, "arms": func(o *Options) { o.Arms = []string{"Z"} },
	} {
		o := base
		mut(&o)
		if _, err := NewPlan(o, HostInfo(), nil); err == nil {
			t.Errorf("%s: bad value accepted", name)
		}
	}
	p, err := NewPlan(base, HostInfo(), nil)
	if err != nil || p.Seed <= 0 || p.Shard != "1/1" {
		t.Fatalf("clock seed / default shard: %+v %v", p, err)
	}
}

func TestResumeConflicts(t *testing.T) {
	saved := testPlan(t, Options{Seed: 1})
	same := testPlan(t, Options{Seed: 1})
	if err := ResumeConflicts(saved, same, GivenArms|GivenCells|GivenBlocks|GivenSeed|GivenOrder); err != nil {
		t.Fatalf("identical flags conflict: %v", err)
	}
	other := testPlan(t, Options{Seed: 2, Blocks: 5})
	if err := ResumeConflicts(saved, other, GivenArms); err != nil {
		t.Fatalf("unchanged flag reported: %v", err)
	}
	err := ResumeConflicts(saved, other, GivenBlocks)
	if err == nil || !strings.Contains(err.Error(), "--blocks") {
		t.Fatalf("blocks conflict not named: %v", err)
	}
	if err := ResumeConflicts(saved, other, GivenSeed); err == nil {
		t.Fatal("seed conflict not reported")
	}
	// --cells and --cell both set the cells; the message names the flag given.
	fewer := testPlan(t, Options{Seed: 1, Cells: []string{"control"}})
	if err := ResumeConflicts(saved, fewer, GivenCustomCells); err == nil || !strings.Contains(err.Error(), "--cell [") {
		t.Fatalf("--cell conflict: %v", err)
	}
}
