package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestAppendConcurrent appends scrapes of many targets at once, as a
// scraper's targets finish together: each Append returns once its scrape
// is stored (committed with others or alone), every one is stored once,
// and the merged profile is pprof's merge of them all.
func TestAppendConcurrent(t *testing.T) {
	s, _ := openTestSQLite(t)
	ctx := context.Background()
	cpu := leftpadProfiles(t, profseries.CPU)
	const targets = 24
	var wg sync.WaitGroup
	errs := make(chan error, targets*len(cpu))
	for i := range targets {
		target := profseries.NewLabels(map[string]string{"job": "fleet", "instance": fmt.Sprintf("10.0.0.%d:6060", i)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, p := range cpu {
				errs <- s.Append(ctx, scrapeAt(target, profseries.CPU, p, profEpoch.Add(time.Duration(j)*10*time.Second)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sel, err := profseries.ParseSelector(`{job="fleet"}`)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.ProfileTargets(ctx, profseries.CPU, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != targets {
		t.Fatalf("%d series stored, want %d", len(ts), targets)
	}
	for _, x := range ts {
		if x.Scrapes != int64(len(cpu)) {
			t.Errorf("%s: %d scrapes stored, want %d", x.Labels, x.Scrapes, len(cpu))
		}
	}
	got, err := s.MergedProfile(ctx, profseries.Query{Type: profseries.CPU, Selector: sel, From: profEpoch, To: profEpoch.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var all []*profile.Profile
	for range targets {
		all = append(all, cpu...)
	}
	want, err := profile.Merge(all)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := total(got), total(want); g != w {
		t.Errorf("merged CPU total %d, pprof's merge %d", g, w)
	}
}

// total sums a profile's last sample value.
func total(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[len(s.Value)-1]
	}
	return n
}

// BenchmarkAppend stores scrapes of 500 targets' CPU profiles on SQLite
// one at a time (serial, each Append waits for its commit before the
// next, as a scraper did) and 32 at once (as the scraper's writers call
// it, sharing commits): compare their scrapes/s, run side by side.
func BenchmarkAppend(b *testing.B) {
	cpu := leftpadProfiles(b, profseries.CPU)
	const targets = 500
	labels := make([]profseries.Labels, targets)
	for i := range labels {
		labels[i] = profseries.NewLabels(map[string]string{"job": "fleet", "instance": fmt.Sprintf("10.0.%d.%d:6060", i/256, i%256)})
	}
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, _ := openTestSQLite(b)
			ctx := context.Background()
			scrapes := make(chan *profseries.Scrape)
			go func() {
				defer close(scrapes)
				for i := range b.N {
					at := profEpoch.Add(time.Duration(i/targets) * 10 * time.Second)
					scrapes <- scrapeAt(labels[i%targets], profseries.CPU, cpu[i%len(cpu)], at)
				}
			}()
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for sc := range scrapes {
						if err := s.Append(ctx, sc); err != nil {
							b.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scrapes/s")
		})
	}
}
