package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// fixture is an analysis with every section, small enough to reason about
// exactly. The analysis itself is tested on real profiles in package
// profiles; here only the rendering is.
func fixture() *profiles.Analysis {
	f := func(v float64) *float64 { return &v }
	return &profiles.Analysis{
		Run: run.Run{
			ID: "20260101T000000Z-ab12", Dir: ".perfscope/runs/20260101T000000Z-ab12", Target: "http://127.0.0.1:8080/pad",
			Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Window: 10, Warmup: 1,
			Version: "v0.1.0", GitCommit: "0123456789abcdef0123", GitDirty: true,
			Load: &loadgen.Result{
				Mode: "closed", Concurrency: 8, KeepAlive: true, DurationSeconds: 11, Requests: 250000, Successes: 249990, Failures: 10,
				Errors: map[string]int64{"timeout": 3, "status_500": 7}, Throughput: 22727.3,
				Latency: loadgen.Latency{P50: 0.31, P90: 0.6, P99: 1.9, P999: 5.2, Max: 12.1},
			},
		},
		PerRequest: &profiles.PerRequest{Throughput: 22727.3, AllocObjects: f(9.25), AllocBytes: f(2764.8), CPUSeconds: f(7.79e-6)},
		CPU: &profiles.CPU{
			SampleType: "cpu", Unit: "nanoseconds", Total: 1_770_000_000, ProfileTotal: 1_770_000_000, Seconds: 10, Cores: 0.177,
			Flat: &profiles.FuncTable{
				SampleType: "cpu", Unit: "nanoseconds", Total: 1_770_000_000, Order: profiles.ByFlat, Focus: true, Omitted: 4,
				Rows: []profiles.Row{
					{Function: "main.(*server).pad", File: "/home/u/pad/server.go", Line: 42, Class: profiles.User, Flat: 190_000_000, FlatShare: 0.107, Cum: 220_000_000, CumShare: 0.124},
					{Function: "main.fib", File: "/home/u/pad/fib.go", Line: 7, Class: profiles.User, Flat: 140_000_000, FlatShare: 0.079, Cum: 320_000_000, CumShare: 0.181},
					{Function: "(runtime)", Class: profiles.Runtime, Flat: 1_300_000_000, FlatShare: 0.734, Cum: 1_300_000_000, CumShare: 0.734, Folded: 153},
					{Function: "(stdlib)", Class: profiles.Stdlib, Flat: 20_000_000, FlatShare: 0.011, Cum: 130_000_000, CumShare: 0.073, Folded: 1},
				},
				Classes: []profiles.Row{
					{Function: "(user)", Class: profiles.User, Flat: 330_000_000, FlatShare: 0.186},
					{Function: "(runtime)", Class: profiles.Runtime, Flat: 1_300_000_000, FlatShare: 0.734},
				},
			},
			Cum: &profiles.FuncTable{
				SampleType: "cpu", Unit: "nanoseconds", Total: 1_770_000_000, Order: profiles.ByCum,
				Rows: []profiles.Row{{Function: "main.main", File: "/home/u/pad/main.go", Line: 10, Class: profiles.User, Cum: 1_330_000_000, CumShare: 0.751}},
			},
			Lines: &profiles.SiteTable{
				CountType: "samples", AmountType: "cpu", AmountUnit: "nanoseconds", TotalCount: 177, TotalAmount: 1_770_000_000,
				Attribution: profiles.AttributeUser, Order: profiles.ByAmount, Focus: true,
				Rows: []profiles.Site{{Function: "main.concat", File: "/home/u/pad/pad.go", Line: 149, Class: profiles.User, Callee: "runtime.concatstring2", Count: 17, CountShare: 0.096, Amount: 170_000_000, AmountShare: 0.096}},
			},
			GC: &profiles.GCShare{SampleType: "cpu", Unit: "nanoseconds", Total: 1_770_000_000, GC: 550_000_000, GCFraction: 0.311, Allocator: 440_000_000, AllocatorFraction: 0.249, Combined: 850_000_000, CombinedFraction: 0.48},
		},
		Allocs: &profiles.Allocs{
			Objects: 2_100_000, Bytes: 628_000_000, Seconds: 10,
			ByObjects: &profiles.SiteTable{
				CountType: "alloc_objects", AmountType: "alloc_space", AmountUnit: "bytes", TotalCount: 2_100_000, TotalAmount: 628_000_000,
				Attribution: profiles.AttributeUser, Order: profiles.ByCount, Focus: true,
				Rows: []profiles.Site{
					{Function: "main.concat", File: "/home/u/pad/pad.go", Line: 149, Class: profiles.User, Count: 307_000, CountShare: 0.146, Amount: 95_600_000, AmountShare: 0.152},
					{Function: "main.label", File: "/home/u/pad/pad.go", Line: 158, Class: profiles.User, Callee: "fmt.Sprintf", Count: 123_000, CountShare: 0.059, Amount: 1_970_000, AmountShare: 0.003},
				},
			},
			ByBytes: &profiles.SiteTable{
				CountType: "alloc_objects", AmountType: "alloc_space", AmountUnit: "bytes", TotalCount: 2_100_000, TotalAmount: 628_000_000,
				Attribution: profiles.AttributeUser, Order: profiles.ByAmount, Focus: true,
				Rows: []profiles.Site{{Function: "main.buffers", File: "/home/u/pad/pad.go", Line: 170, Class: profiles.User, Callee: "runtime.makeslice", Count: 300, CountShare: 0.0001, Amount: 314_572_800, AmountShare: 0.501}},
			},
		},
		Block: &profiles.SiteTable{
			CountType: "contentions", AmountType: "delay", AmountUnit: "nanoseconds", TotalCount: 170, TotalAmount: 358_000_000,
			Attribution: profiles.AttributeUser, Order: profiles.ByAmount, Focus: true,
			Rows: []profiles.Site{{Function: "main.wait", File: "/home/u/pad/pad.go", Line: 229, Class: profiles.User, Callee: "runtime.chanrecv2", Count: 50, CountShare: 0.294, Amount: 66_800_000, AmountShare: 0.187}},
		},
		Mutex: &profiles.SiteTable{
			CountType: "contentions", AmountType: "delay", AmountUnit: "nanoseconds", TotalCount: 177, TotalAmount: 149_000_000,
			Attribution: profiles.AttributeUser, Order: profiles.ByAmount, Focus: true,
			Rows: []profiles.Site{{Function: "main.(*logger).Log", File: "/home/u/pad/log.go", Line: 31, Class: profiles.User, Callee: "sync.(*Mutex).Unlock", Count: 121, CountShare: 0.684, Amount: 140_000_000, AmountShare: 0.941}},
		},
		Goroutines: &profiles.Goroutines{Start: 4, End: 29, Grew: []profiles.StackGrowth{
			{Function: "main.park", File: "/home/u/pad/pad.go", Line: 237, Class: profiles.User, Wait: "runtime.chanrecv1", Start: 0, End: 25, Delta: 25},
		}},
		Routes: []profiles.RouteShare{
			{Route: "GET /pad", Value: 1_000_000_000, Unit: "nanoseconds", Share: 0.565, Top: []profiles.Charge{{Function: "main.(*server).pad", Value: 190_000_000, Share: 0.19}}},
			{Route: "", Value: 770_000_000, Unit: "nanoseconds", Share: 0.435},
		},
		Notes:         []string{"The block profile is empty: turn it on."},
		ProfileErrors: []profiles.ProfileError{{Kind: "heap", Error: "fetch heap profile: 404 Not Found"}},
		Warnings:      []string{"cpu profile: something odd"},
	}
}

func findingsFixture() []findings.Finding { return sampleFindings() }

func render(t *testing.T, f Format, a *profiles.Analysis, fs []findings.Finding) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f, a, fs); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTextSections(t *testing.T) {
	out := render(t, Text, fixture(), findingsFixture())
	// Findings come first, the rest in a fixed order.
	order := []string{"\nFINDINGS\n", "\nLOAD\n", "\nCPU\n", "\nALLOCATIONS\n", "\nBLOCKING\n", "\nMUTEX CONTENTION\n", "\nGOROUTINES\n", "\nCPU BY ROUTE\n", "\nNOTES\n"}
	last := -1
	for _, s := range order {
		i := strings.Index(out, s)
		if i < 0 {
			t.Errorf("no section %q", strings.TrimSpace(s))
			continue
		}
		if i < last {
			t.Errorf("section %q out of order", strings.TrimSpace(s))
		}
		last = i
	}
	for _, want := range []string{
		"perfscope report: run 20260101T000000Z-ab12",
		"commit 0123456789ab (with uncommitted changes)",
		"1. String concatenation in a loop  [28.8% of allocated objects]  (concat-loop)",
		"fix: Build the string once with a strings.Builder",
		"250,000 in 11s (closed loop, 8 connections)",
		"22,727 req/s",
		"10 (<0.01%): status_500 7, timeout 3",
		"p50 310µs  p90 600µs  p99 1.9ms  p99.9 5.2ms  max 12.1ms",
		"9.25 allocations, 2.7 KiB allocated, 7.79µs CPU",
		"garbage collector 31.1%, allocator 24.9%, together 48.0% of CPU",
		"own CPU by kind of code: user code 18.6%, runtime 73.4%",
		"(4 more not shown)",
		"(runtime: 153 functions)",
		"(standard library: 1 function)",
		"pad/server.go:42",
		"runtime.concatstring2",
		"2.1M objects, 599 MiB allocated over 10s",
		"fmt.Sprintf",
		"300 MiB",
		"runtime.chanrecv2",
		"sync.(*Mutex).Unlock",
		"4 at the start, 29 at the end (+25)",
		"(no route label)",
		"main.(*server).pad 19.0%",
		"- heap profile: fetch heap profile: 404 Not Found",
		"- warning: cpu profile: something odd",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestTextAligned checks that a table's columns line up: every row of the
// flat table has its location at the same offset as the header's.
func TestTextAligned(t *testing.T) {
	out := render(t, Text, fixture(), nil)
	lines := strings.Split(out, "\n")
	var header int
	for i, l := range lines {
		if strings.Contains(l, "flat  flat%") {
			header = i
			break
		}
	}
	if header == 0 {
		t.Fatal("no flat table")
	}
	col := strings.Index(lines[header], "location")
	fn := strings.Index(lines[header], "function")
	for _, l := range lines[header+1 : header+3] {
		if !strings.HasPrefix(l[col:], "pad/") {
			t.Errorf("location not at column %d: %q", col, l)
		}
		if !strings.HasPrefix(l[fn:], "main.") {
			t.Errorf("function not at column %d: %q", fn, l)
		}
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space: %q", l)
		}
	}
	// No findings is said, so a reader knows the rules ran.
	if !strings.Contains(out, "FINDINGS\n  none: no rule found a known problem in this run") {
		t.Error("no findings not said")
	}
}

func TestMarkdown(t *testing.T) {
	out := render(t, Markdown, fixture(), findingsFixture())
	for _, want := range []string{
		"## perfscope report: run 20260101T000000Z-ab12\n",
		"\n### Findings\n",
		"#### 1. String concatenation in a loop",
		"\n### CPU\n",
		"| flat | flat% | cum | cum% | location | function |\n|---:|---:|---:|---:|---|---|\n",
		"| `main.(*server).pad` |",
		"| `sync.(*Mutex).Unlock` |",
		"- **throughput**: 22,727 req/s",
		"status\\_500",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// Outside code spans, a * must be escaped or it starts emphasis.
	noCode := regexp.MustCompile("`[^`]*`").ReplaceAllString(out, "")
	if regexp.MustCompile(`[^\\]\*[^*]`).MatchString(strings.ReplaceAll(noCode, "**", "")) {
		t.Errorf("unescaped * outside code in:\n%s", noCode)
	}
	if strings.Index(out, "### Findings") > strings.Index(out, "### Load") {
		t.Error("findings not first")
	}
}

func TestJSON(t *testing.T) {
	out := render(t, JSON, fixture(), nil)
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if string(m["findings"]) != "[]" {
		t.Errorf("findings = %s, want []", m["findings"])
	}
	for _, k := range []string{"run", "options", "load", "per_request", "cpu", "allocs", "block", "mutex", "goroutines", "routes", "notes", "profile_errors", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	var back profiles.Analysis
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	if back.CPU.Flat.Rows[0] != fixture().CPU.Flat.Rows[0] {
		t.Errorf("round trip: %+v", back.CPU.Flat.Rows[0])
	}
	withFindings := render(t, JSON, fixture(), findingsFixture())
	if !strings.Contains(withFindings, `"title": "String concatenation in a loop"`) {
		t.Error("findings missing from JSON")
	}
}

// TestSparse renders an analysis of a run that captured almost nothing.
func TestSparse(t *testing.T) {
	a := &profiles.Analysis{Run: run.Run{ID: "x", Interrupted: true}, Options: profiles.Options{Route: "GET /a"},
		ProfileErrors: []profiles.ProfileError{{Kind: "cpu", Error: "500 cpu profiling already in use"}}}
	for _, f := range []Format{Text, Markdown, JSON} {
		out := render(t, f, a, nil)
		if !strings.Contains(out, "cpu profiling already in use") {
			t.Errorf("%s: profile error not shown:\n%s", f, out)
		}
		if f != JSON && (!strings.Contains(out, "interrupted") || !strings.Contains(out, `route filter "GET /a"`)) {
			t.Errorf("%s: run state not shown:\n%s", f, out)
		}
		if f == Text && strings.Contains(out, "CPU\n") {
			t.Errorf("empty CPU section rendered:\n%s", out)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range Formats() {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("html"); err == nil {
		t.Error("html accepted")
	}
}

// TestNoFindingsOnlyAfterAnalysis: "none" is said only when profiles were
// analysed on a healthy load.
func TestNoFindingsOnlyAfterAnalysis(t *testing.T) {
	bare := &profiles.Analysis{Run: run.Run{ID: "r", Load: &loadgen.Result{Requests: 10, Successes: 10}}}
	bare.Run.Load.Health = loadgen.Assess(bare.Run.Load, 0)
	out := render(t, Text, bare, nil)
	if strings.Contains(out, "none: no rule found") || !strings.Contains(out, "not diagnosed: the run has no profiles") {
		t.Errorf("a run without profiles:\n%s", out)
	}
	failed := fixture()
	failed.Run.Load = &loadgen.Result{Requests: 10, Failures: 10, Errors: map[string]int64{"status_404": 10}}
	failed.Run.Load.Health = loadgen.Assess(failed.Run.Load, 0)
	out = render(t, Markdown, failed, nil)
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || !strings.Contains(lines[2], "The load failed: 100.0% of requests returned 404 Not Found") {
		t.Errorf("a failed load's report does not lead with it:\n%s", out)
	}
	if strings.Contains(out, "None: no rule found") || !strings.Contains(out, "Not diagnosed as a healthy service") {
		t.Errorf("a failed load's findings:\n%s", out)
	}
}
