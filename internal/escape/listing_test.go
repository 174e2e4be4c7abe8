package escape

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestList(t *testing.T) {
	l, err := List(context.Background(), ListOptions{Dir: "testdata/service"})
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(l.Root) || l.NothingBuilt || l.Profiled || l.Group != GroupEscape {
		t.Errorf("List = root %q, nothing built %v, profiled %v, group %q", l.Root, l.NothingBuilt, l.Profiled, l.Group)
	}
	main := filepath.Join(l.Root, "main.go")
	if !slices.ContainsFunc(l.Diagnostics, func(d Diagnostic) bool { return d.Pos.File == main && d.Pos.Line == 15 }) {
		t.Errorf("no diagnostic at main.go:15 in %d diagnostics", len(l.Diagnostics))
	}
	for _, d := range l.Diagnostics {
		if d.Kind.Group() != GroupEscape {
			t.Errorf("%s: kind %s outside the escape group", d.Pos, d.Kind)
		}
	}
	if src := l.Source[Position{File: main, Line: 15}]; !strings.HasPrefix(src, "s = string(c) + s") {
		t.Errorf("source of main.go:15 = %q", src)
	}
}

// TestListProfile lists the hot lines of a profile taken from a -trimpath
// build elsewhere: its paths match the checkout by their suffix.
func TestListProfile(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.leftPad", SystemName: "main.leftPad", Filename: "/ci/service/main.go"}
	hot := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: fn, Line: 15}}}
	cold := &profile.Location{ID: 2, Address: 0x20, Line: []profile.Line{{Function: fn, Line: 21}}}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		DefaultSampleType: "alloc_space",
		Sample: []*profile.Sample{
			{Location: []*profile.Location{hot}, Value: []int64{3, 300}},
			{Location: []*profile.Location{cold}, Value: []int64{1, 100}},
		},
		Location: []*profile.Location{hot, cold},
		Function: []*profile.Function{fn},
	}
	path := filepath.Join(t.TempDir(), "allocs.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	l, err := List(context.Background(), ListOptions{Dir: "testdata/service", ProfilePath: path, Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Profiled || l.SampleType != "alloc_space" || l.Unit != "bytes" || l.Total != 400 {
		t.Errorf("profile %v %s %s total %d", l.Profiled, l.SampleType, l.Unit, l.Total)
	}
	if len(l.Hot) != 1 || l.Hot[0].Line != 15 || l.Hot[0].Value != 300 || len(l.Hot[0].Diagnostics) == 0 {
		t.Fatalf("hot lines = %+v; want main.go:15 alone (--top 1)", l.Hot)
	}
	if src := l.Source[Position{File: l.Hot[0].Source, Line: 15}]; !strings.HasPrefix(src, "s = string(c) + s") {
		t.Errorf("source of the hot line = %q", src)
	}
}

func TestListBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := List(ctx, ListOptions{Dir: t.TempDir()}); !errors.Is(err, ErrNoPackages) {
		t.Errorf("List outside a module = %v, want ErrNoPackages", err)
	}
	notProfile := filepath.Join(t.TempDir(), "x.pb.gz")
	os.WriteFile(notProfile, []byte("not a profile"), 0o644)
	if _, err := List(ctx, ListOptions{Dir: "testdata/service", ProfilePath: notProfile}); err == nil ||
		errors.Is(err, ErrNoPackages) || !strings.Contains(err.Error(), "not a pprof profile") {
		t.Errorf("List with a bad profile = %v", err)
	}
}
