package gate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadConfig(t *testing.T) {
	cfg, err := ReadConfig("testdata/perfscope.json")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Rounds != 12 || cfg.Thresholds["sec/op"] != 4 || len(cfg.Benchmarks) != 2 {
		t.Errorf("unexpected config %+v", cfg)
	}
	if _, err := ReadConfig("testdata/missing.json"); err != nil {
		t.Errorf("missing file: %v, want defaults", err)
	}
	for _, bad := range []string{`{"gate": {"alpha": 2}}`, `{"gate": {"benchmarks": [{"name": "("}]}}`, `{"gate": {"rounds": "x"}}`, `{"gate": {"unknown": 1}}`} {
		p := filepath.Join(t.TempDir(), "c.json")
		if err := writeFile(p, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadConfig(p); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func TestLoadConfigFlagsOverFile(t *testing.T) {
	given := func(flags ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(flags, f) }
	}
	// Every setting holds a value, as flags do; only the given ones count.
	s := Settings{Rounds: 5, MaxRounds: 30, Benchtime: "1s", Bench: "X", Alpha: 0.2, TimePct: 7}
	cfg, err := LoadConfig("testdata/perfscope.json", s, given("max-rounds", "threshold"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's rounds stand; the flags' max rounds and threshold win;
	// defaults fill what neither says.
	if cfg.Rounds != 12 || cfg.MaxRounds != 30 || cfg.Thresholds["sec/op"] != 7 || cfg.Thresholds["allocs/op"] != 0 ||
		cfg.Alpha != DefaultAlpha || cfg.Benchtime != DefaultBenchtime || cfg.Bench != "." {
		t.Errorf("merged config %+v", cfg)
	}
	s.Rounds = 60
	cfg, err = LoadConfig(filepath.Join(t.TempDir(), "none.json"), s, given("rounds", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Rounds != 60 || cfg.MaxRounds != 60 || cfg.Bench != "X" || cfg.Thresholds["sec/op"] != DefaultTimePct {
		t.Errorf("flags alone: %+v", cfg)
	}
	s.Alpha = 1.5
	if _, err := LoadConfig("testdata/perfscope.json", s, given("alpha")); err == nil {
		t.Error("alpha 1.5 from a flag: no error")
	}
}

func TestLoadConfigInstructions(t *testing.T) {
	given := func(flags ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(flags, f) }
	}
	s := Settings{Measure: MeasureInstructions, Strict: true}
	cfg, err := LoadConfig("testdata/perfscope.json", s, given("measure", "strict"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's rounds stand, without extension; its thresholds lack
	// instructions/op, which is gated at the default all the same.
	if cfg.Measure != MeasureInstructions || !cfg.Strict || cfg.Rounds != 12 || cfg.MaxRounds != 12 || cfg.Thresholds["instructions/op"] != DefaultInstructionsPct {
		t.Errorf("merged config %+v", cfg)
	}
	cfg, err = LoadConfig(filepath.Join(t.TempDir(), "none.json"), s, given("measure"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Rounds != DefaultInstructionRounds || cfg.MaxRounds != DefaultInstructionRounds || cfg.Strict {
		t.Errorf("instruction defaults: %+v", cfg)
	}
	s.Measure = "cycles"
	if _, err := LoadConfig("testdata/perfscope.json", s, given("measure")); err == nil {
		t.Error("measure cycles: no error")
	}
}
