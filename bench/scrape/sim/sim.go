// Package sim replays recorded real scrapes of one service as the scrapes
// of a steady service over any span of time, timestamps injected, for
// measuring the profile-series store on days and weeks of data that
// cannot be recorded in a test.
//
// A replay takes the recorded scrapes of each type in turn and varies
// their values as a live service's vary, keeping the arithmetic the Go
// runtime puts in them, so that a compact encoding is neither helped nor
// hurt by values no runtime writes:
//   - cpu: each stack's sample count varies by about its square root (a
//     Poisson count), at least 1: a recorded stack that a live scrape
//     would miss stands in for a rare one it would show instead, so
//     scrapes keep the recorded number of rows; nanoseconds stay count
//     times period.
//   - allocs (a delta over the interval) and heap (a snapshot): each
//     stack's sample count n of objects of size B, at rate R, is varied
//     the same way; objects and bytes are written as the runtime writes
//     them, n·s and n·B·s truncated with s = 1/(1-exp(-B/R)); allocs
//     deltas are differences of truncated cumulative values, as a delta
//     of two snapshots is; heap's alloc_* are cumulative, per stack
//     across the recorded profiles, and grow scrape after scrape at the
//     recorded rate; its inuse_* are replayed as recorded (in 30
//     recorded rounds, 85% of a heap snapshot's values equal the
//     previous snapshot's: in-use counts move only as the heap does).
//   - mutex, block: contentions and delay vary by ±20%.
//   - goroutine: replayed as recorded.
//
// What it does not simulate: stacks never seen in the recording. A live
// service keeps showing rare stacks (the CPU profile's long tail); a
// replay shows only the recorded ones, so the symbols it stores are a
// floor, and the measurement extrapolates their growth separately (see
// Novelty).
package sim

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Types are the profile types a scraper takes by default.
var Types = []string{profseries.CPU, profseries.Allocs, profseries.Heap, profseries.Goroutine, profseries.Mutex, profseries.Block}

// A Replay makes the scrapes of one target.
type Replay struct {
	Target   profseries.Labels
	Interval time.Duration
	recorded map[string][]*profile.Profile
	rng      *rand.Rand
	// cumulative sample counts of allocs and heap, per type and stack
	// (its addresses and size), across the recorded profiles
	counts map[string]map[string]float64
	n      map[string]int
}

// Load reads the recorded scrapes in dir (TYPE-N.pb.gz, as capture.sh
// writes them) of types.
func Load(dir string, types []string, target profseries.Labels, seed uint64) (*Replay, error) {
	r := &Replay{Target: target, Interval: 10 * time.Second, recorded: map[string][]*profile.Profile{},
		rng: rand.New(rand.NewPCG(seed, 1)), counts: map[string]map[string]float64{}, n: map[string]int{}}
	for _, t := range types {
		ps, err := Recorded(dir, t)
		if err != nil {
			return nil, err
		}
		r.recorded[t] = ps
		r.counts[t] = map[string]float64{}
	}
	return r, nil
}

// Recorded reads the recorded scrapes of one type in dir, in order.
func Recorded(dir, typ string) ([]*profile.Profile, error) {
	files, _ := filepath.Glob(filepath.Join(dir, typ+"-*.pb.gz"))
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s-*.pb.gz", dir, typ)
	}
	sort.Slice(files, func(i, j int) bool {
		if len(files[i]) != len(files[j]) {
			return len(files[i]) < len(files[j]) // -2 before -10
		}
		return files[i] < files[j]
	})
	var ps []*profile.Profile
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p, err := profile.ParseData(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// Next returns the next scrape of typ, starting at at, and its raw size
// (the varied profile written as pprof writes it).
func (r *Replay) Next(typ string, at time.Time) (*profseries.Scrape, error) {
	ps := r.recorded[typ]
	i := r.n[typ] % len(ps)
	r.n[typ]++
	p := ps[i].Copy()
	switch typ {
	case profseries.CPU:
		r.cpu(p)
	case profseries.Allocs, profseries.Heap:
		r.heap(typ, i, p)
	case profseries.Mutex, profseries.Block:
		for _, s := range p.Sample {
			f := 0.8 + 0.4*r.rng.Float64()
			for j := range s.Value {
				s.Value[j] = int64(math.Round(float64(s.Value[j]) * f))
			}
		}
	}
	end := at.Add(r.Interval)
	if typ == profseries.Heap || typ == profseries.Goroutine {
		end = at
	}
	p.TimeNanos = at.UnixNano()
	p.DurationNanos = int64(end.Sub(at))
	var raw bytes.Buffer
	if err := p.Write(&raw); err != nil {
		return nil, err
	}
	return &profseries.Scrape{Target: r.Target, Type: typ, Start: at, End: end,
		Process: profseries.Process{BuildID: "leftpad", Generation: 1}, Profile: p, RawBytes: int64(raw.Len())}, nil
}

// poisson varies a count as a Poisson count of that mean would.
func (r *Replay) poisson(mean float64) float64 {
	return math.Max(0, math.Round(mean+r.rng.NormFloat64()*math.Sqrt(mean)))
}

func (r *Replay) cpu(p *profile.Profile) {
	for _, s := range p.Sample {
		c := max(1, int64(r.poisson(float64(s.Value[0]))))
		s.Value[0], s.Value[1] = c, c*p.Period
	}
}

// heap varies an allocs delta or a heap snapshot (see the package doc).
func (r *Replay) heap(typ string, i int, p *profile.Profile) {
	rate := float64(p.Period)
	cum := r.counts[typ]
	for _, s := range p.Sample {
		size := float64(0)
		if vs := s.NumLabel["bytes"]; len(vs) == 1 {
			size = float64(vs[0])
		}
		if size <= 0 || rate <= 0 || len(s.Value) != 4 {
			continue
		}
		scale := 1 / -math.Expm1(-size/rate)
		objects := func(n float64) int64 { return int64(n * scale) }
		space := func(n float64) int64 { return int64(n * size * scale) }
		allocs := r.poisson(float64(s.Value[0]) / scale)
		key := stackKey(s)
		if typ == profseries.Allocs {
			// A delta of two cumulative snapshots.
			before := cum[key]
			after := before + allocs
			cum[key] = after
			s.Value[0], s.Value[1] = objects(after)-objects(before), space(after)-space(before)
			s.Value[2], s.Value[3] = 0, 0
			continue
		}
		// A snapshot: alloc_* count since the process started, which
		// grow each interval by what the stack allocates in one: the
		// recorded count over the intervals the recording had run
		// (snapshot i was taken about i+1 intervals into the load).
		if _, ok := cum[key]; !ok {
			cum[key] = allocs
		}
		cum[key] += r.poisson(float64(s.Value[0]) / scale / float64(i+1))
		s.Value[0], s.Value[1] = objects(cum[key]), space(cum[key])
	}
}

// stackKey names a sample's stack across the recorded profiles (whose
// location ids differ): its addresses and its size.
func stackKey(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		b.WriteString(strconv.FormatUint(l.Address, 16))
		b.WriteByte(' ')
	}
	b.WriteString(fmt.Sprint(s.NumLabel["bytes"]))
	return b.String()
}
