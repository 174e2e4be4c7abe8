package profseries

import (
	"testing"

	"github.com/perfscope/perfscope/internal/profiles"
)

// TestCumSharesAsFunctions places the stacks of every committed scrape of
// every type once and checks that each scrape's cum shares are, to the
// bit, those of profiles.Functions of the scrape's profile, of the default
// sample type and of every other: what a deploy compares.
func TestCumSharesAsFunctions(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	for _, typ := range capturedTypes {
		ws := realWindows(t, c, d, typ)
		ids := StackIDs(ws...)
		sy, err := Resolve(d, ids)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := place(sy, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range ws {
			p, err := sy.Profile(w)
			if err != nil {
				t.Fatal(err)
			}
			types := []string{""}
			for _, st := range p.SampleType {
				types = append(types, st.Type)
			}
			for _, sampleType := range types {
				ft, err := profiles.Functions(p, sampleType, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pl.cumShares(w, sampleType)
				if err != nil {
					t.Fatal(err)
				}
				want := make(map[string]float64, len(ft.Rows))
				for _, r := range ft.Rows {
					want[r.Function] = r.CumShare
				}
				nonzero := 0
				for k, name := range pl.names {
					if got[k] != want[name] {
						t.Fatalf("%s scrape %d %q: %s cum share %v, profiles.Functions %v", typ, i, sampleType, name, got[k], want[name])
					}
					if got[k] != 0 {
						nonzero++
					}
				}
				if nonzero == 0 && len(ft.Rows) > 0 {
					t.Fatalf("%s scrape %d %q: no share placed, profiles.Functions has %d rows", typ, i, sampleType, len(ft.Rows))
				}
				for _, r := range ft.Rows {
					if pl.index(r.Function) < 0 {
						t.Fatalf("%s scrape %d: %s is in no placed stack", typ, i, r.Function)
					}
				}
			}
		}
	}
}
