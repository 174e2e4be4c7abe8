// Command targets simulates many Go services' pprof endpoints on loopback,
// for measuring the scraper at scale: each target is its own listener (its
// own address, as a scraper sees a fleet) serving real profiles recorded
// from a real service under load, so every body has the size, sample count
// and symbol table of the real thing.
//
//	go run ./bench/scrape/targets -n 500 -profiles DIR -sd targets.json
//
// DIR holds recorded profiles named by type (cpu*.pb.gz, allocs*.pb.gz,
// heap*.pb.gz, goroutine*.pb.gz, mutex*.pb.gz, block*.pb.gz); a target
// serves them in turn. What is simulated, and how that differs from a fleet:
//   - profile?seconds=N waits N seconds, as the runtime does, then answers a
//     recorded CPU profile: the scraper holds the connection as it would.
//   - allocs, heap, mutex and block answer with ?seconds=N as deltas (a
//     recorded profile after N seconds), without as cumulative snapshots that
//     grow (the recorded values times the number of snapshots served), so a
//     scraper subtracting consecutive snapshots gets positive deltas.
//   - All targets serve the same few recorded profiles, so symbols and stacks
//     repeat across targets far more than across a fleet of different
//     services; per target they repeat as a steady service's do.
//
// It writes the targets' addresses as a file_sd file (-sd) and runs until
// interrupted.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
)

var types = []string{"cpu", "allocs", "heap", "goroutine", "mutex", "block"}

func main() {
	n := flag.Int("n", 500, "targets")
	dir := flag.String("profiles", "", "directory of recorded profiles (cpu*.pb.gz, allocs*.pb.gz, ...)")
	sd := flag.String("sd", "targets.json", "file_sd file to write the targets to")
	flag.Parse()
	if err := run(*n, *dir, *sd); err != nil {
		fmt.Fprintln(os.Stderr, "targets:", err)
		os.Exit(1)
	}
}

type recorded struct {
	raw  [][]byte           // bodies as recorded, in turn
	prof []*profile.Profile // parsed, for the growing snapshots
}

func run(n int, dir, sdPath string) error {
	if dir == "" {
		return fmt.Errorf("give -profiles DIR")
	}
	recs := map[string]*recorded{}
	for _, t := range types {
		files, _ := filepath.Glob(filepath.Join(dir, t+"*.pb.gz"))
		sort.Strings(files)
		if len(files) == 0 {
			return fmt.Errorf("%s: no %s*.pb.gz", dir, t)
		}
		r := &recorded{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			p, err := profile.ParseData(b)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			r.raw = append(r.raw, b)
			r.prof = append(r.prof, p)
		}
		recs[t] = r
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var addrs []string
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("target %d: %w", i, err)
		}
		addrs = append(addrs, ln.Addr().String())
		srv := &http.Server{Handler: newTarget(recs), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		go func() { <-ctx.Done(); srv.Close() }()
	}
	sd, err := json.MarshalIndent([]map[string]any{{"targets": addrs, "labels": map[string]string{"service": "simulated"}}}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(sdPath, sd, 0o644); err != nil {
		return err
	}
	fmt.Printf("%d targets serving profiles from %s; file_sd in %s\n", n, dir, sdPath)
	<-ctx.Done()
	return nil
}

// target is one simulated service.
type target struct {
	recs   map[string]*recorded
	served map[string]*atomic.Int64
}

func newTarget(recs map[string]*recorded) http.Handler {
	t := &target{recs: recs, served: map[string]*atomic.Int64{}}
	for _, k := range types {
		t.served[k] = new(atomic.Int64)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Base(r.URL.Path)
		if name == "profile" {
			name = "cpu"
		}
		rec, ok := t.recs[name]
		if !ok {
			if name == "pprof" || name == "" {
				fmt.Fprintln(w, "<html>simulated pprof index</html>")
				return
			}
			http.NotFound(w, r)
			return
		}
		k := t.served[name].Add(1)
		i := int(k-1) % len(rec.raw)
		secs, _ := strconv.Atoi(r.URL.Query().Get("seconds"))
		if secs > 0 {
			select {
			case <-time.After(time.Duration(secs) * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		if name == "cpu" || name == "goroutine" || secs > 0 {
			w.Write(rec.raw[i])
			return
		}
		// A cumulative snapshot: the recorded values times k, so
		// consecutive snapshots grow as a live process's do.
		p := rec.prof[i].Copy()
		for _, s := range p.Sample {
			for j := range s.Value {
				s.Value[j] *= k
			}
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write(buf.Bytes())
	})
	return mux
}
