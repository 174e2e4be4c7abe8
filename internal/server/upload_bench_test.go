package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/testenv"
)

// lines streams the body made of n lines line(0), line(1), ..., holding one
// line at a time, so that the test process's memory is the server's.
type lines struct {
	n, i int
	line func(i int) string
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.i == l.n {
			return 0, io.EOF
		}
		l.buf = append(l.buf[:0], l.line(l.i)...)
		l.i++
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// Bounds of the growth of the test process, server and client, in MiB,
// while the server reads a benchmark upload, the race detector's shadow
// memory included. earlyGrowth bounds a body refused within its first
// lines. capGrowth bounds one read up to a cap: the results until then,
// which bench.MaxMemory bounds (96 MiB as the server counts them), or the
// 100,000 results of bench.MaxResults and the store's copy of their samples
// when they are stored, with the garbage the collector has yet to free.
// Measured without -race and with it: refused early 0–4 and 0–12 MiB;
// 100,000 results and 100,001 lines 35 and 129, measurements to the
// memory cap 78 and 171, configurations to it 94 and 115, 100,000 results
// stored 75 and 83.
const (
	earlyGrowth = 32
	capGrowth   = 256
)

// benchLine is a result line of benchmark name.
func benchLine(name string, i int) string {
	return fmt.Sprintf("Benchmark%s-8 \t 1000\t %d ns/op\t 64 B/op\t 2 allocs/op\n", name, 1000+i%7)
}

// TestBenchUploadClientMistakes: every mistake in a benchmark upload is
// answered with a 4xx and one line naming it, promptly, at a bounded cost
// in memory; nothing is stored, and the server goes on serving.
func TestBenchUploadClientMistakes(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	header := "goos: linux\ngoarch: amd64\npkg: example.com/big\n"
	// A compressed file sent as it is: gzip's header has NUL bytes.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(header + strings.Repeat(benchLine("A", 0), 1000)))
	zw.Close()
	latin1 := strings.Repeat("caf\xe9 ", 10)
	for _, tc := range []struct {
		name string
		body io.Reader
		code int
		want string
		// maxMiB bounds how much the process may grow while the server
		// reads the body.
		maxMiB int64
	}{
		{"line too long", &lines{n: 10, line: func(i int) string {
			if i == 4 {
				return strings.Repeat("x", 1<<20) + "\n"
			}
			return benchLine("A", i)
		}}, 400, "line 5 is longer than 32768 bytes", earlyGrowth},
		{"binary", bytes.NewReader(gz.Bytes()), 400, "line 1 has a NUL byte: the body is binary", earlyGrowth},
		{"not UTF-8", strings.NewReader(header + benchLine("A", 0) + latin1 + "\n"), 400, "line 5 is not UTF-8 text", earlyGrowth},
		{"too many results", &lines{n: 150_001, line: func(i int) string {
			if i == 0 {
				return header
			}
			return benchLine(fmt.Sprintf("Same%d", i%3), i)
		}}, 413, "more than 100000 result lines (line 100004 is one more)", capGrowth},
		// 300,000 distinct benchmarks: refused at the 10,001st metric,
		// three a benchmark, instead of a server error after a minute.
		{"too many metrics", &lines{n: 300_001, line: func(i int) string {
			if i == 0 {
				return header
			}
			return benchLine(fmt.Sprintf("Distinct%d", i), i)
		}}, 413, "more than 10000 distinct metrics (a benchmark's unit; line 3337 has one more)", earlyGrowth},
		// Thousands of measurements a line: little text, much memory.
		{"too many measurements", &lines{n: 2_001, line: func(i int) string {
			if i == 0 {
				return header
			}
			return "BenchmarkWide-8 1000" + strings.Repeat(" 1 u", 8000) + "\n"
		}}, 413, "MiB of memory an upload may", capGrowth},
		{"configuration too large", strings.NewReader(header + "note: " + strings.Repeat("n", 20_000) + "\n" + benchLine("A", 0)),
			413, "the configuration lines in effect at line 5 take 20042 bytes, more than the 16384", earlyGrowth},
		// A long configuration line, and a short one changing at every
		// result: each result has a configuration of its own.
		{"configuration changing at every line", &lines{n: 20_001, line: func(i int) string {
			if i == 0 {
				return header + "note: " + strings.Repeat("n", 8_000) + "\n"
			}
			return fmt.Sprintf("run: %d\n", i) + benchLine("Conf", i)
		}}, 413, "MiB of memory an upload may", capGrowth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.WatchMemory()
			start := time.Now()
			code, body := ts.do(t, http.MethodPost, "/api/v1/bench?commit=abcd1234", ts.Token, "text/plain", tc.body)
			took, grew := time.Since(start), mem.Stop()>>20
			t.Logf("answered %d in %v; the process grew by %d MiB", code, took.Round(time.Millisecond), grew)
			checkOneLineError(t, code, body, tc.code, tc.want)
			if grew > tc.maxMiB {
				t.Errorf("the process grew by %d MiB while the server read the body, more than %d", grew, tc.maxMiB)
			}
			checkNothingStored(t, ts)
		})
	}

	t.Run("body cut short", func(t *testing.T) {
		text := header + strings.Repeat(benchLine("A", 1), 100)
		code, body := postCutShort(t, ts, "/api/v1/bench?commit=abcd1234", text, len(text)+1000)
		checkOneLineError(t, code, body, 400, "the body ended at line 104 before its announced end")
		checkNothingStored(t, ts)
	})

	// The most the caps allow is stored.
	mem := testenv.WatchMemory()
	code, body := ts.do(t, http.MethodPost, "/api/v1/bench?commit=abcd1234", ts.Token, "text/plain", &lines{n: 100_001, line: func(i int) string {
		if i == 0 {
			return header
		}
		return benchLine(fmt.Sprintf("Same%d", i%3), i)
	}})
	grew := mem.Stop() >> 20
	t.Logf("100,000 result lines stored; the process grew by %d MiB", grew)
	if code != http.StatusCreated || !strings.Contains(string(body), `"results":100000`) {
		t.Fatalf("upload of 100,000 result lines = %d %s", code, body)
	}
	if grew > capGrowth {
		t.Errorf("the process grew by %d MiB while the server stored 100,000 result lines, more than %d", grew, capGrowth)
	}
	_, metrics := ts.do(t, http.MethodGet, "/metrics", "", "", nil)
	for _, want := range []string{
		`perfscope_uploads_total{kind="bench",outcome="bad_request"} 4`,
		`perfscope_uploads_total{kind="bench",outcome="too_large"} 5`,
		`perfscope_uploads_total{kind="bench",outcome="ok"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
}

// checkOneLineError checks an API error answer: its status, and one line
// that says want.
func checkOneLineError(t *testing.T, code int, body []byte, wantCode int, want string) {
	t.Helper()
	var e api.Error
	err := json.Unmarshal(body, &e)
	if code != wantCode || err != nil || !strings.Contains(e.Error, want) || strings.Contains(e.Error, "\n") {
		t.Errorf("= %d %s; want %d with one line saying %q", code, body, wantCode, want)
	}
}

// checkNothingStored checks that the store has no benchmark run and that
// the server still answers.
func checkNothingStored(t *testing.T, ts *testServer) {
	t.Helper()
	var commits []any
	ts.getJSON(t, "/api/v1/commits", &commits)
	if len(commits) != 0 {
		t.Errorf("a refused upload stored %v", commits)
	}
	if code, body := ts.do(t, http.MethodGet, "/healthz", "", "", nil); code != http.StatusOK {
		t.Errorf("after the refusal, /healthz = %d %s", code, body)
	}
}

// postCutShort sends a POST announcing a body of length bytes, sends text,
// shorter, and closes its side of the connection; it returns the answer.
func postCutShort(t *testing.T, ts *testServer, path, text string, length int) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
		path, req.Host, ts.Token, length, text)
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("read the answer to a body cut short: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
