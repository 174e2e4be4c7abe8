package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadConfig feeds .perfscope.json documents to ReadConfig: it must
// never panic, and a configuration it accepts must stay valid once the
// defaults are laid over it, as the gate uses it.
func FuzzReadConfig(f *testing.F) {
	f.Add([]byte(`{"gate":{"alpha":0.01,"rounds":20,"max_rounds":40,"benchtime":"50ms","bench":".",` +
		`"threshold_pct":{"sec/op":3,"B/op":0},"benchmarks":[{"name":"Pad/.*","unit":"sec/op","threshold_pct":10},{"name":"Flaky","ignore":true}]}}`))
	f.Add([]byte(`{"gate":{"benchmarks":[{"name":"(","ignore":true}]}}`))
	f.Add([]byte(`{"gate":{"alpha":-1}}`))
	f.Add([]byte(`{}`))
	path := filepath.Join(f.TempDir(), ".perfscope.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadConfig(path)
		if err != nil {
			return
		}
		given := func(string) bool { return false }
		full, err := LoadConfig(path, Settings{}, given)
		if err != nil {
			t.Fatalf("ReadConfig accepted what LoadConfig refuses: %v\n%s", err, data)
		}
		if full.MaxRounds < full.Rounds {
			t.Fatalf("max rounds %d below rounds %d", full.MaxRounds, full.Rounds)
		}
		for _, b := range full.Benchmarks {
			full.rule("pkg", b.Name, b.Unit)
		}
	})
}
