package profiles

import (
	"strconv"
	"strings"
	"testing"
)

func TestAllocSitesUser(t *testing.T) {
	p := load(t, "allocs")
	st, err := Sites(p, SampleAllocObjects, SampleAllocSpace, AttributeUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.AmountUnit != "bytes" || st.TotalCount <= 0 || st.TotalAmount <= 0 {
		t.Fatalf("unit %q totals %d/%d", st.AmountUnit, st.TotalCount, st.TotalAmount)
	}

	byObjects := st.Top(ByCount, 5, true)
	top := byObjects.Rows[0]
	if top.Function != "main.concatLoop" || top.Line != siteLine(t, "concat") {
		t.Errorf("top site by objects: %s line %d, want main.concatLoop line %d", top.Function, top.Line, siteLine(t, "concat"))
	}
	// runtime/pprof hides the runtime's own frames at the leaf of
	// allocation stacks, so the concatenation is usually the leaf itself.
	if top.Callee != "" && !strings.HasPrefix(top.Callee, "runtime.concatstring") {
		t.Errorf("concat site callee = %q, want none or runtime.concatstring*", top.Callee)
	}
	if !strings.HasSuffix(top.File, "testdata/workload/main.go") || !strings.HasSuffix(top.Where(), ":"+itoa(top.Line)) {
		t.Errorf("site location %q", top.Where())
	}
	sprintf := findSite(byObjects.Rows, "main.formatLabels")
	if sprintf == nil {
		t.Fatalf("no main.formatLabels site among %v", siteNames(byObjects.Rows))
	}
	if sprintf.Line != siteLine(t, "sprintf") || sprintf.Callee != "fmt.Sprintf" {
		t.Errorf("sprintf site: line %d callee %q, want line %d fmt.Sprintf", sprintf.Line, sprintf.Callee, siteLine(t, "sprintf"))
	}

	byBytes := st.Top(ByAmount, 5, true)
	if b := byBytes.Rows[0]; b.Function != "main.makeBuffers" || b.Line != siteLine(t, "buffers") {
		t.Errorf("top site by bytes: %s line %d, want main.makeBuffers line %d", b.Function, b.Line, siteLine(t, "buffers"))
	}
	for _, r := range byBytes.Rows {
		if r.Folded == 0 && r.Class != User {
			t.Errorf("non-user site %s in the focused table", r.Function)
		}
		if r.AmountShare > 1 || r.CountShare > 1 {
			t.Errorf("share above 1: %+v", r)
		}
	}
}

// TestAllocSitesLeaf checks the plain pprof -lines view: fmt.Sprintf's
// allocations are charged to fmt.Sprintf, not to the user's line.
func TestAllocSitesLeaf(t *testing.T) {
	p := load(t, "allocs")
	st, err := Sites(p, SampleAllocObjects, SampleAllocSpace, AttributeLeaf, nil)
	if err != nil {
		t.Fatal(err)
	}
	top := st.Top(ByCount, 5, false)
	if top.Focus {
		t.Error("unfocused table says focused")
	}
	all := st.Top(ByCount, 0, false)
	sprintf := findSite(all.Rows, "fmt.Sprintf")
	if sprintf == nil || sprintf.Class != Stdlib || sprintf.Callee != "" {
		t.Errorf("fmt.Sprintf leaf site: %+v", sprintf)
	}
	user, err := Sites(p, SampleAllocObjects, SampleAllocSpace, AttributeUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	// In the leaf view main.formatLabels keeps only its own allocations
	// (boxing the argument); in the user view it gets fmt.Sprintf's too.
	leafOwn, mine := findSite(all.Rows, "main.formatLabels"), findSite(user.Rows, "main.formatLabels")
	if mine == nil || (leafOwn != nil && leafOwn.Count >= mine.Count) {
		t.Errorf("main.formatLabels: leaf view %+v, user view %+v", leafOwn, mine)
	}
	var count int64
	for _, r := range st.Rows {
		count += r.Count
	}
	if count != st.TotalCount {
		t.Errorf("site counts sum to %d, want %d", count, st.TotalCount)
	}
}

func TestWaitSites(t *testing.T) {
	block, err := Sites(load(t, "block"), SampleContentions, SampleDelay, AttributeUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := block.Top(ByAmount, 10, true)
	ch := findSite(b.Rows, "main.waitOnChannel")
	if ch == nil {
		t.Fatalf("no main.waitOnChannel among block sites %v", siteNames(b.Rows))
	}
	if ch.Line != siteLine(t, "chanrecv") || !strings.HasPrefix(ch.Callee, "runtime.chanrecv") || ch.Amount <= 0 {
		t.Errorf("channel wait site: %+v, want line %d waiting in runtime.chanrecv*", *ch, siteLine(t, "chanrecv"))
	}
	if b.AmountUnit != "nanoseconds" {
		t.Errorf("block delay unit %q", b.AmountUnit)
	}

	mutex, err := Sites(load(t, "mutex"), SampleContentions, SampleDelay, AttributeUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := mutex.Top(ByAmount, 10, true)
	if r := m.Rows[0]; r.Function != "main.contendMutex.func1" || r.Line != siteLine(t, "unlock") || r.Callee != "sync.(*Mutex).Unlock" {
		t.Errorf("top mutex site: %+v, want main.contendMutex.func1 line %d releasing sync.(*Mutex).Unlock", r, siteLine(t, "unlock"))
	}
}

func findSite(rows []Site, function string) *Site {
	for i := range rows {
		if rows[i].Function == function {
			return &rows[i]
		}
	}
	return nil
}

func siteNames(rows []Site) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Function+" "+r.Where())
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
