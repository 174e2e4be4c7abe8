package httpmetrics

import (
	"strings"
	"testing"
	"time"
)

// TestExposition: counters and the histogram come out in the exposition
// format, buckets cumulative, label values escaped, series sorted so two
// scrapes of the same state are byte for byte the same.
func TestExposition(t *testing.T) {
	m := New()
	m.Observe("GET", "GET /runs/{id}", 200, 3*time.Millisecond)
	m.Observe("GET", "GET /runs/{id}", 200, 70*time.Millisecond)
	m.Observe("GET", "GET /runs/{id}", 404, 40*time.Second)
	m.Observe("POST", "a \"quoted\"\\route\n", 500, time.Millisecond)
	m.Upload("bench", "ok", 1234)
	m.Upload("bench", "too_large", 99)
	m.Upload("run", "bad_request", 7)

	var b strings.Builder
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`perfscope_http_requests_total{method="GET",route="GET /runs/{id}",code="200"} 2` + "\n",
		`perfscope_http_requests_total{method="GET",route="GET /runs/{id}",code="404"} 1` + "\n",
		`perfscope_http_requests_total{method="POST",route="a \"quoted\"\\route\n",code="500"} 1` + "\n",
		`perfscope_http_request_duration_seconds_bucket{route="GET /runs/{id}",le="0.005"} 1` + "\n",
		`perfscope_http_request_duration_seconds_bucket{route="GET /runs/{id}",le="0.1"} 2` + "\n",
		`perfscope_http_request_duration_seconds_bucket{route="GET /runs/{id}",le="30"} 2` + "\n",
		`perfscope_http_request_duration_seconds_bucket{route="GET /runs/{id}",le="+Inf"} 3` + "\n",
		`perfscope_http_request_duration_seconds_count{route="GET /runs/{id}"} 3` + "\n",
		`perfscope_uploads_total{kind="bench",outcome="too_large"} 1` + "\n",
		`perfscope_upload_bytes_total{kind="bench"} 1234` + "\n",
		`perfscope_upload_bytes_total{kind="run"} 0` + "\n",
		"# TYPE perfscope_http_request_duration_seconds histogram\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, `code="200"`), strings.Index(out, `code="404"`); i < 0 || j < i {
		t.Errorf("series are not sorted by route and code:\n%s", out)
	}
	var again strings.Builder
	m.WriteTo(&again)
	if again.String() != out {
		t.Error("two writes of the same state differ")
	}
}
