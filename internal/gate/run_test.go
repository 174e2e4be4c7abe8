package gate

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestRunExtendsWhileNoisy feeds Run samples that stay too noisy to
// decide: it must extend in batches up to MaxRounds and stop there.
func TestRunExtendsWhileNoisy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var calls []int
	var m Measurement
	m.Benchmark, m.Unit = "A", "sec/op"
	measure := func(_ context.Context, rounds int) ([]Measurement, error) {
		calls = append(calls, rounds)
		m.Base = append(m.Base, spread(rng, rounds, 100, 1)...)
		m.Head = append(m.Head, spread(rng, rounds, 100, 1)...)
		return []Measurement{m}, nil
	}
	d, done, err := Run(context.Background(), measure, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if done != DefaultMaxRounds || len(calls) != 3 || calls[0] != DefaultRounds || calls[1] != 10 || calls[2] != 10 {
		t.Errorf("measured %v (%d rounds); want [20 10 10]", calls, done)
	}
	if d.Judgements[0].Verdict != TooNoisy || d.ExitCode() != 2 {
		t.Errorf("verdict %s, exit %d; want too noisy, 2", d.Judgements[0].Verdict, d.ExitCode())
	}
}

func TestRunStopsWhenDecided(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	calls := 0
	measure := func(_ context.Context, rounds int) ([]Measurement, error) {
		calls++
		return []Measurement{{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, rounds, 100), Head: noisy(rng, rounds, 130)}}, nil
	}
	d, done, err := Run(context.Background(), measure, Config{Rounds: 10, MaxRounds: 40})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || done != 10 || d.Regressions != 1 {
		t.Errorf("%d calls, %d rounds, %d regressions; want 1, 10, 1", calls, done, d.Regressions)
	}

	broken := errors.New("benchmark binary crashed")
	_, _, err = Run(context.Background(), func(context.Context, int) ([]Measurement, error) { return nil, broken }, Config{})
	if !errors.Is(err, broken) {
		t.Errorf("error %v, want the measuring step's", err)
	}
}
