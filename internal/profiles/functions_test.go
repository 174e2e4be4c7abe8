package profiles

import (
	"slices"
	"testing"
)

func TestFunctionsFocused(t *testing.T) {
	p := load(t, "cpu")
	ft, err := Functions(p, SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ft.Unit != "nanoseconds" || ft.Total <= 0 {
		t.Fatalf("unit %q total %d", ft.Unit, ft.Total)
	}

	flat := ft.Top(ByFlat, 5, true)
	if !flat.Focus {
		t.Fatal("table with user code is not focused")
	}
	users := userRows(flat.Rows)
	if len(users) == 0 || len(users) > 5 {
		t.Fatalf("want 1-5 user rows, got %v", names(users))
	}
	top3 := names(users[:min(3, len(users))])
	for _, want := range []string{"main.burnCPU", "main.fib"} {
		if !slices.Contains(top3, want) {
			t.Errorf("%s not among the top user functions by flat: %v", want, top3)
		}
	}
	// User rows come first, then one folded row per other class.
	seenFolded := false
	folded := map[Class]bool{}
	for _, r := range flat.Rows {
		if r.Folded > 0 {
			seenFolded = true
			if r.Class == User || folded[r.Class] {
				t.Errorf("unexpected folded row %+v", r)
			}
			folded[r.Class] = true
			continue
		}
		if seenFolded || r.Class != User {
			t.Errorf("row %s (%s) after folded rows or not user code", r.Function, r.Class)
		}
	}
	// Every other class with CPU of its own gets its folded row; which
	// classes have any depends on where the sampler caught the program.
	for _, r := range ft.Rows {
		if r.Class != User && r.Flat > 0 && !folded[r.Class] {
			t.Errorf("no folded %s row (%s has %d ns flat) in %v", r.Class, r.Function, r.Flat, names(flat.Rows))
			folded[r.Class] = true
		}
	}
	if !folded[Runtime] {
		t.Errorf("no folded runtime row in %v", names(flat.Rows))
	}
	for i := 1; i < len(users); i++ {
		if users[i].Flat > users[i-1].Flat {
			t.Errorf("rows not ranked by flat: %v", names(users))
		}
	}

	cum := ft.Top(ByCum, 5, true)
	if u := userRows(cum.Rows); len(u) == 0 || u[0].Function != "main.main" {
		t.Errorf("top user function by cum: want main.main, got %v", names(u))
	}
	for _, r := range cum.Rows {
		if r.Cum > ft.Total || r.CumShare > 1 {
			t.Errorf("%s cum %d exceeds total %d", r.Function, r.Cum, ft.Total)
		}
	}
}

func TestFunctionsAll(t *testing.T) {
	p := load(t, "cpu")
	ft, err := Functions(p, SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := ft.Top(ByFlat, 0, false)
	if all.Focus || all.Omitted != 0 {
		t.Fatalf("focus %v omitted %d", all.Focus, all.Omitted)
	}
	var flat int64
	classes := map[Class]bool{}
	for _, r := range all.Rows {
		flat += r.Flat
		classes[r.Class] = true
		if r.Folded != 0 {
			t.Errorf("folded row %s in the full table", r.Function)
		}
	}
	if flat != ft.Total {
		t.Errorf("flat values sum to %d, want the total %d", flat, ft.Total)
	}
	if !classes[Runtime] || !classes[User] {
		t.Errorf("classes in full table: %v", classes)
	}
	// The class totals add up to the total too.
	var classFlat int64
	for _, r := range ft.Classes {
		classFlat += r.Flat
	}
	if classFlat != ft.Total {
		t.Errorf("class flat values sum to %d, want %d", classFlat, ft.Total)
	}
	limited := ft.Top(ByFlat, 3, false)
	if len(limited.Rows) != 3 || limited.Omitted != len(all.Rows)-3 {
		t.Errorf("limit 3: %d rows, %d omitted of %d", len(limited.Rows), limited.Omitted, len(all.Rows))
	}
}

// TestCumRecursion checks that a recursive function's cum counts each
// sample once: main.fib appears many times on its stacks.
func TestCumRecursion(t *testing.T) {
	p := load(t, "cpu")
	vi, err := sampleIndex(p, SampleCPU)
	if err != nil {
		t.Fatal(err)
	}
	var once, perFrame int64
	deepest := 0
	for _, s := range p.Sample {
		n := 0
		for _, f := range frames(s) {
			if f.fn != nil && f.fn.Name == "main.fib" {
				n++
			}
		}
		if n > 0 {
			once += s.Value[vi]
			perFrame += int64(n) * s.Value[vi]
		}
		deepest = max(deepest, n)
	}
	if deepest < 5 {
		t.Fatalf("main.fib recursed only %d deep in the samples", deepest)
	}
	ft, err := Functions(p, SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := ft.Find("main.fib")
	if !ok {
		t.Fatal("main.fib not in the profile")
	}
	if r.Cum != once {
		t.Errorf("main.fib cum = %d, want %d (once per sample; per frame would be %d)", r.Cum, once, perFrame)
	}
	if r.Cum > ft.Total {
		t.Errorf("cum %d > total %d", r.Cum, ft.Total)
	}
}

// TestClassCum checks the folded rows' cum: a class counts only below the
// innermost user frame, so runtime.main above main.main does not make the
// runtime 100%, while GC workers, which have no user frame, count.
func TestClassCum(t *testing.T) {
	ft, err := Functions(load(t, "cpu"), SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := ft.Class(Runtime)
	if !ok {
		t.Fatal("no runtime row")
	}
	user, _ := ft.Class(User)
	if rt.Cum >= ft.Total {
		t.Errorf("runtime cum %d is the whole profile %d", rt.Cum, ft.Total)
	}
	if rt.Cum < rt.Flat || rt.Cum == 0 {
		t.Errorf("runtime cum %d < flat %d", rt.Cum, rt.Flat)
	}
	if user.Cum+rt.Cum < ft.Total {
		t.Errorf("user cum %d + runtime cum %d do not cover the total %d", user.Cum, rt.Cum, ft.Total)
	}
}

func TestFunctionsSampleTypes(t *testing.T) {
	for _, tc := range []struct{ file, sampleType, unit string }{
		{"cpu", SampleCPUCount, "count"},
		{"allocs", SampleAllocObjects, "count"},
		{"allocs", SampleAllocSpace, "bytes"},
		{"block", SampleContentions, "count"},
		{"block", SampleDelay, "nanoseconds"},
		{"mutex", SampleDelay, "nanoseconds"},
		{"allocs", "", "bytes"}, // the default: alloc_space
	} {
		ft, err := Functions(load(t, tc.file), tc.sampleType, nil)
		if err != nil {
			t.Errorf("%s %s: %v", tc.file, tc.sampleType, err)
			continue
		}
		if ft.Unit != tc.unit || ft.Total <= 0 || len(ft.Rows) == 0 {
			t.Errorf("%s %s: unit %q total %d rows %d", tc.file, tc.sampleType, ft.Unit, ft.Total, len(ft.Rows))
		}
	}
	if _, err := Functions(load(t, "cpu"), "alloc_space", nil); err == nil {
		t.Error("no error for a sample type the profile lacks")
	}
}
