// Command gate measures the error rates of "perfscope gate" on this
// machine: how often an A/A run (base and head the same code) raises a
// false alarm, and how often an injected slowdown of one benchmark is
// caught.
//
// It first measures many interleaved rounds of the bundled examples with
// the gate's own runner (bench.RunGate, base = HEAD, head = the working
// tree), then simulates gate runs by drawing the default number of rounds
// from that pool, many times, and judging each draw with the gate's own
// decision loop (gate.Run). A slowdown is injected by scaling
// one benchmark's head sec/op samples in the draw.
//
//	go run ./bench/gate -pool 40                   # measure, then simulate
//	go run ./bench/gate -data bench/gate/data      # simulate from saved rounds
//
// It studies the gate on wall time alone (--measure time); instructions.sh
// beside it studies the gate on instruction counts by running it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gate"
)

func main() {
	var (
		pool     = flag.Int("pool", 40, "interleaved rounds to measure for the pool")
		data     = flag.String("data", "", "read base.txt/head.txt from this directory instead of measuring")
		save     = flag.String("save", "bench/gate/data", "where to save measured rounds")
		pkgs     = flag.String("pkgs", "./examples/...", "packages whose benchmarks are the material")
		trials   = flag.Int("trials", 1000, "simulated A/A gate runs")
		injected = flag.Int("inject-trials", 200, "simulated gate runs per benchmark with an injected slowdown")
		rounds   = flag.Int("rounds", gate.DefaultRounds, "rounds per simulated gate run")
		maxR     = flag.Int("max-rounds", gate.DefaultMaxRounds, "rounds a simulated gate run may extend to while too noisy")
		slowdown = flag.Float64("slowdown", 0.05, "injected slowdown of one benchmark")
		sizes    = flag.String("sizes", "0.10,0.25,0.5,1", "further slowdowns to report overall detection for")
		pct      = flag.Float64("threshold", gate.DefaultTimePct, "sec/op threshold in percent")
		bytesPct = flag.Float64("bytes-threshold", gate.DefaultThresholds()["B/op"], "B/op threshold in percent")
		alpha    = flag.Float64("alpha", gate.DefaultAlpha, "significance level")
		seed     = flag.Uint64("seed", 1, "random seed")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var base, headData []byte
	if *data != "" {
		var err error
		if base, err = os.ReadFile(filepath.Join(*data, "base.txt")); err != nil {
			fail(err)
		}
		if headData, err = os.ReadFile(filepath.Join(*data, "head.txt")); err != nil {
			fail(err)
		}
	} else {
		// Both sides are built from HEAD, each in its own worktree, so
		// that uncommitted work in this tree cannot make the A/A run
		// anything but A/A.
		root, err := bench.RepoRoot(ctx, ".")
		if err != nil {
			fail(err)
		}
		head, err := bench.AddWorktree(ctx, root, "HEAD")
		if err != nil {
			fail(err)
		}
		start := time.Now()
		run, err := bench.RunGate(ctx, bench.GateOptions{
			Dir: head.Dir, BaseRef: "HEAD", Packages: []string{*pkgs},
			Rounds: *pool, Benchtime: gate.DefaultBenchtime,
		})
		// The simulation below takes minutes: give the worktree back now.
		head.Remove()
		if err != nil {
			fail(err)
		}
		base, headData = run.Raw.Base, run.Raw.Head
		fmt.Printf("measured %d rounds in %s (build %s)\n", *pool, time.Since(start).Round(time.Second), run.Build.Round(time.Second))
		if err := run.Raw.Save(*save); err != nil {
			fail(err)
		}
	}

	br, err := bench.Parse(bytes.NewReader(base), "base.txt")
	if err != nil {
		fail(err)
	}
	hr, err := bench.Parse(bytes.NewReader(headData), "head.txt")
	if err != nil {
		fail(err)
	}
	ms := gate.Pair(br.Results, hr.Results)
	n := len(ms[0].Base)
	for _, m := range ms {
		n = min(n, len(m.Base), len(m.Head))
	}
	cfg := gate.Config{Alpha: *alpha, Rounds: *rounds, MaxRounds: max(*maxR, *rounds), Thresholds: gate.DefaultThresholds()}
	if n < cfg.MaxRounds {
		fail(fmt.Errorf("pool has %d rounds, fewer than the %d a gate run may use", n, cfg.MaxRounds))
	}
	cfg.Thresholds["sec/op"] = *pct
	cfg.Thresholds["B/op"] = *bytesPct
	rng := rand.New(rand.NewPCG(*seed, *seed))

	fmt.Printf("pool: %d rounds of %d measurements; each simulated gate run draws %d rounds, up to %d while too noisy; %d A/A trials, %d per injected benchmark; alpha %.3g; sec/op threshold %.3g%%\n\n",
		n, len(ms), cfg.Rounds, cfg.MaxRounds, *trials, *injected, *alpha, *pct)
	fmt.Printf("%-55s %8s %8s\n", "benchmark (sec/op)", "noise", "A/A gap")
	for _, m := range ms {
		if m.Unit == "sec/op" {
			fmt.Printf("%-55s %7.1f%% %7.1f%%\n", m.Benchmark, 100*spread(m.Base[:n]), 100*(median(m.Head[:n])/median(m.Base[:n])-1))
		}
	}

	// A/A: no change at all.
	alarms, undecided := 0, 0
	blamed := make(map[string]int)
	for range *trials {
		d := simulate(ms, n, rng, cfg, -1, 0)
		if d.ExitCode() == 2 {
			undecided++
		}
		if d.Regressions > 0 {
			alarms++
			for _, j := range d.Judgements {
				if j.Verdict == gate.Regression {
					blamed[j.Benchmark+" "+j.Unit]++
				}
			}
		}
	}
	fmt.Printf("\nA/A: %d false alarms in %d trials (%.1f%%), no-alarm rate %.1f%%; undecided (exit 2) %.1f%%\n",
		alarms, *trials, percent(alarms, *trials), 100-percent(alarms, *trials), percent(undecided, *trials))
	for k, v := range blamed {
		fmt.Printf("  false alarms on %s: %d\n", k, v)
	}

	// Injected slowdown, one benchmark at a time.
	fmt.Printf("\ninjected %+.0f%% slowdown of one benchmark's sec/op:\n", 100**slowdown)
	caught, flagged, total := 0, 0, 0
	for i, m := range ms {
		if m.Unit != "sec/op" {
			continue
		}
		c, u := 0, 0
		for range *injected {
			d := simulate(ms, n, rng, cfg, i, *slowdown)
			switch {
			case d.Judgements[i].Verdict == gate.Regression:
				c++
			case d.ExitCode() != 0:
				u++
			}
		}
		caught += c
		flagged += u
		total += *injected
		fmt.Printf("  %-55s caught %5.1f%%  undecided %5.1f%%  passed %5.1f%%\n", m.Benchmark, percent(c, *injected), percent(u, *injected), 100-percent(c+u, *injected))
	}
	fmt.Printf("overall: caught %.1f%%, undecided (exit 2) %.1f%%, passed silently %.1f%%\n", percent(caught, total), percent(flagged, total), 100-percent(caught+flagged, total))

	// How large must a slowdown be to be caught on this machine?
	for _, f := range strings.Split(*sizes, ",") {
		s, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || s == 0 {
			continue
		}
		fmt.Printf("detection of a %+.0f%% slowdown: %.1f%%\n", 100*s, 100*detection(ms, n, *injected, rng, cfg, s))
	}
}

// detection is the share of simulated gate runs that flag a slowdown
// injected into one sec/op measurement, over all of them in turn.
func detection(ms []gate.Measurement, n, trials int, rng *rand.Rand, cfg gate.Config, slow float64) float64 {
	caught, total := 0, 0
	for i, m := range ms {
		if m.Unit != "sec/op" {
			continue
		}
		for range trials {
			d := simulate(ms, n, rng, cfg, i, slow)
			if d.Judgements[i].Verdict == gate.Regression {
				caught++
			}
			total++
		}
	}
	return float64(caught) / float64(total)
}

// simulate runs one gate with the gate's own loop (gate.Run): its
// measuring step draws rounds at random from the pool, so while the gate
// asks for more rounds (too noisy to decide) it gets further rounds of the
// same draw, as a real run would.
func simulate(ms []gate.Measurement, n int, rng *rand.Rand, cfg gate.Config, inject int, slow float64) *gate.Decision {
	idx := rng.Perm(n)[:cfg.MaxRounds]
	done := 0
	d, _, err := gate.Run(context.Background(), func(_ context.Context, more int) ([]gate.Measurement, error) {
		done += more
		return draw(ms, idx[:done], inject, slow), nil
	}, cfg)
	if err != nil {
		fail(err)
	}
	return d
}

// draw takes the rounds idx of every measurement (a round's base and head
// ran side by side, so they stay paired), with the head of measurement
// inject slowed by factor 1+slow.
func draw(ms []gate.Measurement, idx []int, inject int, slow float64) []gate.Measurement {
	rounds := len(idx)
	out := make([]gate.Measurement, len(ms))
	for i, m := range ms {
		o := m
		o.Base, o.Head = make([]float64, rounds), make([]float64, rounds)
		for k, r := range idx {
			o.Base[k], o.Head[k] = m.Base[r], m.Head[r]
			if i == inject {
				o.Head[k] *= 1 + slow
			}
		}
		out[i] = o
	}
	return out
}

func percent(n, of int) float64 { return 100 * float64(n) / float64(of) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is the interquartile range relative to the median: a robust
// measure of the noise the gate must see through.
func spread(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1))] }
	return (q(0.75) - q(0.25)) / median(s)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gate study:", err)
	os.Exit(1)
}
