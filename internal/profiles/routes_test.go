package profiles

import (
	"testing"

	"github.com/google/pprof/profile"
)

func TestRoutes(t *testing.T) {
	p := load(t, "cpu")
	routes, err := Routes(p, SampleCPU, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]RouteShare{}
	var sum float64
	for _, r := range routes {
		byName[r.Route] = r
		sum += r.Share
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("route shares sum to %f", sum)
	}
	for route, fn := range map[string]string{
		"GET /burn": "main.burnCPU",
		"GET /fib":  "main.fib",
	} {
		r, ok := byName[route]
		if !ok {
			t.Errorf("no route %q in %v", route, byName)
			continue
		}
		if len(r.Top) == 0 || r.Top[0].Function != fn {
			t.Errorf("route %q top %+v, want %s first", route, r.Top, fn)
		}
		if r.Share <= 0 || r.Value <= 0 || len(r.Top) > 3 {
			t.Errorf("route %q: %+v", route, r)
		}
	}
	// The concatenation's time is in the runtime; it is charged to the
	// user functions that concatenate and allocate.
	concat := byName["GET /concat"]
	charged := map[string]bool{}
	var sumShares float64
	for _, ch := range concat.Top {
		charged[ch.Function] = true
		sumShares += ch.Share
	}
	if !charged["main.concatLoop"] || !charged["main.makeBuffers"] {
		t.Errorf("GET /concat charged to %+v, want main.concatLoop and main.makeBuffers", concat.Top)
	}
	if sumShares > 1.0001 {
		t.Errorf("charges of GET /concat add up to %f", sumShares)
	}
	// GC workers run unlabelled.
	if r, ok := byName[""]; !ok || r.Value <= 0 {
		t.Errorf("no unlabelled share: %+v", r)
	}

	unlabelled := FilterSamples(p, func(s *profile.Sample) bool { return len(s.Label[RouteLabel]) == 0 })
	if routes, err := Routes(unlabelled, SampleCPU, 3, nil); err != nil || routes != nil {
		t.Errorf("profile without labels: %v, %v", routes, err)
	}
}

func TestRouteMatcher(t *testing.T) {
	sample := func(route string) *profile.Sample {
		return &profile.Sample{Label: map[string][]string{RouteLabel: {route}}}
	}
	for _, tc := range []struct {
		pattern, route string
		want           bool
	}{
		{"GET /fib", "GET /fib", true},
		{"fib", "GET /fib", true},
		{"^GET /f", "GET /fib", true},
		{"^/fib", "GET /fib", false},
		{"GET /v1/users/{id}", "GET /v1/users/{id}", true},
		{"GET /a/(", "GET /a/(", true}, // not a valid expression: literal
		{"GET /a/(", "GET /a/b", false},
	} {
		if got := NewRouteMatcher(tc.pattern).Match(sample(tc.route)); got != tc.want {
			t.Errorf("%q matches %q = %v", tc.pattern, tc.route, got)
		}
	}
	if NewRouteMatcher("x").Match(&profile.Sample{}) {
		t.Error("unlabelled sample matched")
	}
}
