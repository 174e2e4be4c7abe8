package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

// The watch pages' store: the real scrapes of the naive leftpad example
// under load in ../profseries/testdata/leftpad (four rounds of every
// profile type), stored as a scraper stores them, once a minute over the
// last watchMinutes minutes, for two targets. The first is deployed
// twice: version 1.0 for the first half, 1.1 after.
const watchMinutes = 30

var (
	watchAPI    = map[string]string{"job": "leftpad", "instance": "127.0.0.1:7001", "env": "prod-eu ✓"}
	watchWorker = map[string]string{"job": "worker", "instance": "127.0.0.1:7002"}
)

// watchTypes are the profile types stored of each target.
var watchTypes = []string{profseries.CPU, profseries.Heap, profseries.Goroutine, profseries.Allocs}

// storeWatchScrapes fills st and returns the end of the stored range (the
// start of the minute after the last scrape).
func storeWatchScrapes(t testing.TB, st *store.DB) time.Time {
	t.Helper()
	raw := map[string][][]byte{}
	for _, typ := range watchTypes {
		for round := 1; round <= 4; round++ {
			b, err := os.ReadFile(filepath.Join("..", "profseries", "testdata", "leftpad", fmt.Sprintf("%s-%d.pb.gz", typ, round)))
			if err != nil {
				t.Fatal(err)
			}
			raw[typ] = append(raw[typ], b)
		}
	}
	end := time.Now().Truncate(time.Minute)
	begin := end.Add(-watchMinutes * time.Minute)
	for i := range watchMinutes {
		at := begin.Add(time.Duration(i) * time.Minute)
		api := map[string]string{"version": "1.0"}
		if i >= watchMinutes/2 {
			api["version"] = "1.1"
		}
		for k, v := range watchAPI {
			api[k] = v
		}
		for _, target := range []map[string]string{api, watchWorker} {
			for _, typ := range watchTypes {
				data := raw[typ][i%4]
				p, err := profile.ParseData(data)
				if err != nil {
					t.Fatal(err)
				}
				s := &profseries.Scrape{Target: profseries.NewLabels(target), Type: typ, Start: at, End: at,
					Process: profseries.Process{BuildID: "leftpad-" + api["version"], Generation: 1}, Profile: p, RawBytes: int64(len(data))}
				if typ == profseries.CPU || typ == profseries.Allocs {
					s.End = at.Add(10 * time.Second)
				}
				p.TimeNanos, p.DurationNanos = s.Start.UnixNano(), int64(s.End.Sub(s.Start))
				if err := st.Append(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return end
}
