package expose

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

const testToken = "0123456789abcdef-test-token"

// start starts a Server for the test and closes it when the test ends.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	return startWith(t, opts, defaultLimits())
}

// startWith is start with the server's time and header bounds given.
func startWith(t *testing.T, opts Options, lim limits) *Server {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := startLimited(context.Background(), opts, lim)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// get requests url with the given Authorization header (none if empty) and
// returns the status and body; it fails the test if there is no response.
func get(t *testing.T, client *http.Client, url, authorization string) (int, []byte) {
	t.Helper()
	code, body, err := request(client, url, authorization)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// request is get for goroutines other than the test's: it returns the
// error instead.
func request(client *http.Client, url, authorization string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s: read body: %w", url, err)
	}
	return resp.StatusCode, body, nil
}
