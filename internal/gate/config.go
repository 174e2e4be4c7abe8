package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"strings"

	"github.com/perfscope/perfscope/internal/bench"
)

// A Config is the gate's configuration: statistics, how much change
// counts, and per-benchmark exceptions. It is read from the "gate" object
// of .perfscope.json:
//
//	{
//	  "gate": {
//	    "alpha": 0.01,
//	    "rounds": 20,
//	    "max_rounds": 40,
//	    "benchtime": "50ms",
//	    "bench": ".",
//	    "measure": "auto",
//	    "strict": false,
//	    "threshold_pct": {"instructions/op": 1, "sec/op": 3, "B/op": 0, "allocs/op": 0},
//	    "benchmarks": [
//	      {"name": "Pad/.*", "unit": "sec/op", "threshold_pct": 10},
//	      {"name": "Flaky", "ignore": true}
//	    ]
//	  }
//	}
//
// measure is "instructions" (count instructions/op under valgrind and
// decide on the exact measures), "time" (wall time alone, as before
// instruction counts existed) or "auto" (instructions when valgrind is
// installed). strict makes a wall-time measurement too noisy to decide
// fail the gate (exit 2) when instructions are measured; with measure
// "time" it always does, time being the only measure.
//
// threshold_pct maps a unit to the relative change, in percent, that a
// significant change must exceed to count; 0 means any worsening. Units not
// listed are reported but not gated, and so is a unit whose better
// direction is unknown (a custom metric; see measure.Better), with a
// warning. Each benchmarks entry overrides the
// threshold (or ignores the benchmark) for names matching "name", a regular
// expression matched against the whole benchmark name without the
// "Benchmark" prefix and GOMAXPROCS suffix ("Pad/n=10"); "unit" and
// "package" narrow it further. The first matching entry wins.
type Config struct {
	Alpha      float64            `json:"alpha,omitempty"`
	Rounds     int                `json:"rounds,omitempty"`
	MaxRounds  int                `json:"max_rounds,omitempty"`
	Benchtime  string             `json:"benchtime,omitempty"`
	Bench      string             `json:"bench,omitempty"`
	Measure    string             `json:"measure,omitempty"`
	Strict     bool               `json:"strict,omitempty"`
	Thresholds map[string]float64 `json:"threshold_pct,omitempty"`
	Benchmarks []BenchmarkRule    `json:"benchmarks,omitempty"`
}

// A BenchmarkRule overrides the gate's threshold for some benchmarks.
type BenchmarkRule struct {
	Name      string   `json:"name"`
	Package   string   `json:"package,omitempty"`
	Unit      string   `json:"unit,omitempty"`
	Threshold *float64 `json:"threshold_pct,omitempty"`
	Ignore    bool     `json:"ignore,omitempty"`

	re *regexp.Regexp
}

// Gate defaults, chosen by the measurements in bench/gate (see its
// README). Twenty short rounds, extended up to forty while the samples
// are too noisy to decide, rather than ten long ones for the same time: the U-test's power grows with the number of samples, and on a
// shared machine a sample's noise comes from bursts of other work rather
// than from its length. Holm–Bonferroni bounds the chance of any false alarm in a run
// by alpha, so alpha is 0.01 for at most one false alarm in a hundred
// runs (benchstat's 0.05 let B/op noise of parallel benchmarks through
// about 2% of the time). The time threshold is low enough that a real 5%
// slowdown clears it; allocation counts are gated on any increase.
const (
	DefaultAlpha     = 0.01
	DefaultRounds    = 20
	DefaultMaxRounds = 40
	DefaultBenchtime = "50ms"
	DefaultTimePct   = 3.0
)

// Defaults of a gate that counts instructions. Counts repeat within about
// 0.25% whatever the machine's load, one benchmark whose own work depends on
// a per-process hash seed within 0.65% (bench/gate's README), so 1% is a
// change no load can fake, and a few ordinary rounds are enough for the
// exact allocation measures; wall time is then reported, not waited for.
const (
	DefaultInstructionsPct   = 1.0
	DefaultInstructionRounds = 5
	// DefaultCountReps is how many times each side's benchmark is
	// counted: once, as repeated counts differ by well under the
	// threshold, and every count costs seconds under valgrind.
	DefaultCountReps = 1
	// RecountReps is how many more times a count that moved is counted
	// on both sides before it decides (Measure), each over RecountScale
	// times the operations: the median of the three counts decides and
	// explains it. Code whose instructions depend on timing (network
	// I/O, goroutines waiting on each other) shows it by counts that
	// disagree, and is then too noisy to gate. Code that does not still
	// sees the runtime add some ten to a hundred thousand instructions to
	// a run on a timing of its own (the background scavenger releasing
	// pages that later allocations search for again, stacks shrunk or
	// not by testing's collection before the operations): the same
	// amount whatever the operations, so a count over four times as many
	// carries a quarter of it per operation, and the median leaves out
	// a run it hit hardest. Measured on a benchmark of 280,000
	// instructions an operation, quiet: four counts over 714 operations
	// spread over 248 instructions an operation, four over 2,856 over 60.
	RecountReps  = 2
	RecountScale = 4
)

// Measures of Config.Measure.
const (
	MeasureTime         = "time"
	MeasureInstructions = "instructions"
	MeasureAuto         = "auto"
)

// MoreRounds returns how many rounds to add after done rounds that ended
// in d: batches of half the configured rounds (at least 5) while d needs
// more rounds to decide, up to MaxRounds in all. The gate and the study
// of its error rates both extend runs by this rule.
func (c Config) MoreRounds(done int, d *Decision) int {
	c = c.withDefaults()
	if done >= c.MaxRounds || !d.NeedsMoreRounds() {
		return 0
	}
	return min(max(c.Rounds/2, 5), c.MaxRounds-done)
}

// DefaultThresholds returns the default per-unit thresholds in percent.
func DefaultThresholds() map[string]float64 {
	return map[string]float64{"instructions/op": DefaultInstructionsPct, "sec/op": DefaultTimePct, "B/op": 0, "allocs/op": 0}
}

func (c Config) withDefaults() Config {
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.Benchtime == "" {
		c.Benchtime = DefaultBenchtime
	}
	if c.Bench == "" {
		c.Bench = "."
	}
	if c.Thresholds == nil {
		c.Thresholds = DefaultThresholds()
	} else if _, ok := c.Thresholds[bench.UnitInstructions]; !ok {
		// A file written before instruction counts existed still
		// gates the one measure a shared machine cannot disturb.
		c.Thresholds = maps.Clone(c.Thresholds)
		c.Thresholds[bench.UnitInstructions] = DefaultInstructionsPct
	}
	return c
}

// WithDefaults returns the configuration with every unset field at its
// default.
func (c Config) WithDefaults() Config { return c.withDefaults() }

// Validate checks the configuration and compiles its patterns.
func (c *Config) Validate() error {
	if c.Alpha < 0 || c.Alpha > 1 {
		return fmt.Errorf("alpha %v: must be in [0, 1]", c.Alpha)
	}
	switch c.Measure {
	case "", MeasureTime, MeasureInstructions, MeasureAuto:
	default:
		return fmt.Errorf("measure %q: want instructions, time or auto", c.Measure)
	}
	if c.Rounds < 0 || c.MaxRounds < 0 {
		return fmt.Errorf("rounds %d, max_rounds %d: must be positive", c.Rounds, c.MaxRounds)
	}
	for u, t := range c.Thresholds {
		if t < 0 {
			return fmt.Errorf("threshold_pct for %s: %v must not be negative", u, t)
		}
	}
	for i := range c.Benchmarks {
		r := &c.Benchmarks[i]
		re, err := regexp.Compile("^(?:" + strings.TrimPrefix(r.Name, "Benchmark") + ")$")
		if err != nil {
			return fmt.Errorf("benchmarks[%d].name: %w", i, err)
		}
		r.re = re
		if r.Threshold != nil && *r.Threshold < 0 {
			return fmt.Errorf("benchmarks[%d].threshold_pct: must not be negative", i)
		}
	}
	return nil
}

// rule returns the threshold (as a fraction) for a measurement and whether
// it is gated at all.
func (c Config) rule(pkg, name, unit string) (float64, bool) {
	base, ok := c.Thresholds[unit]
	short := trimProcs(name)
	for _, r := range c.Benchmarks {
		if r.re == nil || !r.re.MatchString(short) && !r.re.MatchString(name) {
			continue
		}
		if r.Package != "" && r.Package != pkg || r.Unit != "" && r.Unit != unit {
			continue
		}
		if r.Ignore {
			return 0, false
		}
		if r.Threshold != nil {
			return *r.Threshold / 100, true
		}
		break
	}
	return base / 100, ok
}

// trimProcs drops a "-N" GOMAXPROCS suffix.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

// ReadConfig reads the "gate" object of a .perfscope.json file. A
// missing file gives an empty configuration (every field at its default).
func ReadConfig(path string) (Config, error) {
	var file struct {
		Gate Config `json:"gate"`
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read gate config: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := file.Gate.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: gate: %w", path, err)
	}
	return file.Gate, nil
}

// Settings are gate settings from the command line, each named by its
// flag: rounds, max-rounds, benchtime, bench, alpha, threshold (the
// sec/op threshold in percent), measure and strict.
type Settings struct {
	Rounds, MaxRounds int
	Benchtime, Bench  string
	Alpha, TimePct    float64
	Measure           string
	Strict            bool
}

// LoadConfig reads the configuration file at path (see ReadConfig) and
// lays over it the settings that given reports as given, by flag name:
// the command line wins over the file, and the defaults fill in the rest.
// MaxRounds is never below Rounds, so a larger --rounds alone does not
// need a larger --max-rounds too. Measure auto (the default) becomes
// instructions when valgrind is installed, else time; counting
// instructions, rounds default to DefaultInstructionRounds without
// extension.
func LoadConfig(path string, s Settings, given func(flag string) bool) (Config, error) {
	c, err := ReadConfig(path)
	if err != nil {
		return Config{}, err
	}
	override(given("rounds"), &c.Rounds, s.Rounds)
	override(given("max-rounds"), &c.MaxRounds, s.MaxRounds)
	override(given("benchtime"), &c.Benchtime, s.Benchtime)
	override(given("bench"), &c.Bench, s.Bench)
	override(given("alpha"), &c.Alpha, s.Alpha)
	override(given("measure"), &c.Measure, s.Measure)
	override(given("strict"), &c.Strict, s.Strict)
	if c.Measure == "" || c.Measure == MeasureAuto {
		c.Measure = string(bench.ResolveMeasure(bench.MeasureAuto))
	}
	if c.Measure == MeasureInstructions {
		if c.Rounds == 0 {
			c.Rounds = DefaultInstructionRounds
		}
		if c.MaxRounds == 0 {
			c.MaxRounds = c.Rounds
		}
	}
	c = c.withDefaults()
	if given("threshold") {
		c.Thresholds["sec/op"] = s.TimePct
	}
	c.MaxRounds = max(c.MaxRounds, c.Rounds)
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func override[T any](given bool, field *T, v T) {
	if given {
		*field = v
	}
}
