package profseries

import (
	"math"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// total sums sample type typ over p, as pprof's top shows the total.
func total(t *testing.T, p *profile.Profile, typ string) int64 {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			var n int64
			for _, s := range p.Sample {
				n += s.Value[i]
			}
			return n
		}
	}
	t.Fatalf("no sample type %s", typ)
	return 0
}

// TestGaugeSeries reads the gauges off the committed scrapes: CPU in cores
// is the CPU time over the window's length, heap and goroutines the mean
// of the snapshots of a step; a step without scrapes is no point.
func TestGaugeSeries(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, g := range Gauges {
		ps := realProfiles(t, g.Type)
		var ws []Window
		var want []float64
		for i, p := range ps {
			// Two scrapes a minute, the third minute left out.
			at := base.Add(time.Duration(i/2*60+i%2*10) * time.Second)
			if i >= 2 {
				at = at.Add(time.Minute)
			}
			p.TimeNanos = at.UnixNano()
			if !g.Rate {
				p.DurationNanos = 0
			}
			w, _ := window(t, c, d, p)
			ws = append(ws, w)
			if i%2 == 1 {
				a, b := total(t, ps[i-1], g.SampleType), total(t, p, g.SampleType)
				if g.Rate {
					want = append(want, float64(a+b)/float64(ps[i-1].DurationNanos+p.DurationNanos))
				} else {
					want = append(want, float64(a+b)/2)
				}
			}
		}
		pts := GaugeSeries(ws, g, time.Minute)
		if len(pts) != 2 || !pts[0].Start.Equal(base) || !pts[1].Start.Equal(base.Add(2*time.Minute)) {
			t.Fatalf("%s: want points at 12:00 and 12:02 (none for the minute without scrapes), got %+v", g.Name, pts)
		}
		for i, p := range pts {
			if p.Scrapes != 2 || math.Abs(p.Value-want[i]) > 1e-9*math.Abs(want[i]) || p.Value <= 0 {
				t.Errorf("%s step %d: got %v over %d scrapes, want %v over 2", g.Name, i, p.Value, p.Scrapes, want[i])
			}
		}
		if g.Rate && (pts[0].Value > 16 || pts[0].Value < 0.01) {
			t.Errorf("%s: %v cores of a loaded service on this machine is not a core count", g.Name, pts[0].Value)
		}
	}
}

func TestStepFor(t *testing.T) {
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		span time.Duration
		want time.Duration
	}{
		{15 * time.Minute, 10 * time.Second},
		{24 * time.Hour, 10 * time.Minute},
		{7 * 24 * time.Hour, time.Hour},
		{6 * time.Hour, 2 * time.Minute},
		{60 * 24 * time.Hour, 6 * time.Hour},
		{4 * time.Hour, time.Minute},
		{25 * time.Minute, 10 * time.Second},
		{41 * time.Minute, 20 * time.Second},
		{2 * time.Hour, 30 * time.Second},
		{2*time.Hour + time.Minute, time.Minute}, // not 40 s
		{3 * time.Hour, time.Minute},             // not 50 s
	} {
		if got := StepFor(from, from.Add(c.span), 240, 10*time.Second); got != c.want {
			t.Errorf("StepFor(%v, 240 points) = %v, want %v", c.span, got, c.want)
		}
	}
}

func TestNearestRange(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 26, h, 0, 0, 0, time.UTC) }
	spans := []Span{{First: at(2), Last: at(4)}, {First: at(10), Last: at(12)}}
	for _, c := range []struct {
		from, to   time.Time
		wantFrom   time.Time
		wantOK     bool
		explaining string
	}{
		{at(5), at(6), at(3).Add(time.Second), true, "after the first span: its last hour"},
		{at(8), at(9), at(10), true, "nearer the second span's start"},
		{at(20), at(21), at(11).Add(time.Second), true, "after everything: the last hour"},
		{at(0), at(1), at(2), true, "before everything: the first hour"},
	} {
		f, to, ok := NearestRange(spans, c.from, c.to)
		if ok != c.wantOK || !f.Equal(c.wantFrom) || to.Sub(f) != c.to.Sub(c.from) {
			t.Errorf("%s: NearestRange(%v, %v) = %v, %v, %v; want from %v, as long", c.explaining, c.from, c.to, f, to, ok, c.wantFrom)
		}
	}
	if _, _, ok := NearestRange(nil, at(1), at(2)); ok {
		t.Error("no spans: want no range")
	}
}

func TestVersions(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 26, 12, m, 0, 0, time.UTC) }
	ls := func(v, inst string) Labels {
		return NewLabels(map[string]string{"job": "api", "version": v, "instance": inst})
	}
	vs := Versions([]Span{
		{Labels: ls("1.1", "a"), First: at(30), Last: at(50)},
		{Labels: ls("1.0", "a"), First: at(0), Last: at(29)},
		{Labels: ls("1.1", "b"), First: at(31), Last: at(55)},
		{Labels: NewLabels(map[string]string{"job": "api"}), First: at(0), Last: at(59)},
	}, "version")
	if len(vs) != 2 || vs[0].Value != "1.0" || vs[1].Value != "1.1" || !vs[1].First.Equal(at(30)) || !vs[1].Last.Equal(at(55)) {
		t.Errorf("want 1.0 then 1.1 spanning 12:30 to 12:55 over both instances, got %+v", vs)
	}
	sel, err := ParseSelector(`{job="api", version="1.0"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.With("version", "1.1").String(); got != `{job="api", version="1.1"}` {
		t.Errorf("With: got %s", got)
	}
}
