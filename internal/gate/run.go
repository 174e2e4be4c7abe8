package gate

import (
	"context"
	"fmt"
)

// A MeasureFunc measures rounds more interleaved rounds of base and head
// and returns every measurement made so far, both sides paired (see Pair).
type MeasureFunc func(ctx context.Context, rounds int) ([]Measurement, error)

// Run is the gate: it measures cfg.Rounds rounds, decides, and while the
// samples are too noisy or too few to decide (Config.MoreRounds) measures
// more, up to cfg.MaxRounds in all. The extension looks only at sample
// sizes and spread, never at which side is ahead, so it does not bias the
// test. Run returns the last decision and the number of rounds measured.
func Run(ctx context.Context, measure MeasureFunc, cfg Config) (*Decision, int, error) {
	cfg = cfg.withDefaults()
	if cfg.Rounds < 1 {
		return nil, 0, fmt.Errorf("rounds %d: must be at least 1", cfg.Rounds)
	}
	done, rounds := 0, cfg.Rounds
	for {
		ms, err := measure(ctx, rounds)
		if err != nil {
			return nil, done, err
		}
		done += rounds
		d := Decide(ms, cfg)
		if rounds = cfg.MoreRounds(done, d); rounds == 0 {
			return d, done, nil
		}
	}
}
