package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/loadgen"
)

func TestWriteLoad(t *testing.T) {
	r := &loadgen.Result{
		URL: "http://127.0.0.1:8080/tx", Method: "POST", Mode: "open", Concurrency: 100, Rate: 2000,
		DurationSeconds: 60, Requests: 120000, Successes: 119990, Failures: 10, Throughput: 1999.8,
		BytesRead: 12 << 20, BytesWritten: 3 << 20,
		Errors:      map[string]int64{"timeout": 3, "status_500": 7},
		Latency:     loadgen.Latency{Min: 0.05, Mean: 0.4, P50: 0.31, P90: 0.6, P99: 1.9, P999: 5.2, Max: 12.1},
		Late:        &loadgen.Late{Count: 12, MaxLagMs: 3.5},
		Interrupted: true,
	}
	var text bytes.Buffer
	if err := WriteLoad(&text, Text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"POST http://127.0.0.1:8080/tx\n",
		"  requests     120,000 in 60s (open loop at 2000 req/s, up to 100 in flight, a new connection per request)\n",
		"  throughput   2,000 req/s\n",
		"  transfer     12 MiB read, 3 MiB written\n",
		"  errors       10 (<0.01%): status_500 7, timeout 3\n",
		"p50 310µs  p90 600µs  p99 1.9ms  p99.9 5.2ms  max 12.1ms  (min 50µs, mean 400µs)",
		"  late sends   12 sent over 1ms late (worst 3.5ms), 0 never sent",
		"  interrupted  the load was stopped early",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := WriteLoad(&js, JSON, r); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// The fields README.md documents for 'perfscope load --format json'.
	for _, k := range []string{"url", "method", "mode", "concurrency", "rate", "keepalive", "start", "duration_seconds",
		"requests", "successes", "failures", "errors", "throughput_rps", "bytes_read", "bytes_written", "latency",
		"late", "interrupted", "status_codes"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, js.String())
		}
	}
	for _, k := range []string{"min_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"} {
		if _, ok := got["latency"].(map[string]any)[k]; !ok {
			t.Errorf("JSON latency lacks %q", k)
		}
	}
}
