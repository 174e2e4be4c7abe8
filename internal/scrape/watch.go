package scrape

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultWatchCheck is how often WatchFile looks at the file when no
// notification came.
const DefaultWatchCheck = 30 * time.Second

// WatchFile starts calling reload each time the file at path changes
// from what it holds now (its content, not merely its time), until ctx
// is done, and returns: watched through
// fsnotify where the system tells (its directory, so that editors that
// replace the file are seen), and compared every check in any case
// (DefaultWatchCheck when zero). A reload's error goes to report; the
// caller keeps its old configuration then, as Scraper.Reload does.
func WatchFile(ctx context.Context, path string, check time.Duration, reload func() error, report func(error)) {
	if check <= 0 {
		check = DefaultWatchCheck
	}
	last, _ := os.ReadFile(path)
	events := make(<-chan fsnotify.Event)
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if w.Add(filepath.Dir(path)) == nil {
			events = w.Events
		}
	}
	go func() {
		if w != nil {
			defer w.Close()
		}
		watchFile(ctx, path, check, last, events, reload, report)
	}()
}

func watchFile(ctx context.Context, path string, check time.Duration, last []byte, events <-chan fsnotify.Event, reload func() error, report func(error)) {
	abs, _ := filepath.Abs(path)
	tick := time.NewTicker(check)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			if a, _ := filepath.Abs(ev.Name); a != abs {
				continue
			}
		case <-tick.C:
		}
		data, err := os.ReadFile(path)
		if err != nil || bytes.Equal(data, last) {
			continue // a file being replaced is read when it is back
		}
		last = data
		if err := reload(); err != nil && report != nil {
			report(err)
		}
	}
}
