// Command bad answers each request from a configuration file it reads and
// parses again every time: loadConfig reads the file, and parseConfig, a
// function of its own, turns it into settings. Parsing costs far more
// than reading.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

type config map[string]int

func main() {
	path := writeConfig()
	defer os.Remove(path)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cfg, err := loadConfig(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(strconv.AppendInt(nil, int64(cfg["limit.orders.17"]), 10))
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/limits", 4)
	})
}

//go:noinline
func loadConfig(path string) (config, error) {
	data, err := os.ReadFile(path) // want: reread
	if err != nil {
		return nil, err
	}
	return parseConfig(data) // want: reread
}

// parseConfig reads "key = value" lines, skipping blanks and comments.
//
//go:noinline
func parseConfig(data []byte) (config, error) {
	cfg := config{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: no '='", n+1)
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		cfg[strings.TrimSpace(k)] = i
	}
	return cfg, nil
}

// writeConfig writes the file the service reads.
func writeConfig() string {
	f, err := os.CreateTemp("", "limits-*.conf")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "# request limits per resource and tenant")
	for i := range 200 {
		fmt.Fprintf(f, "limit.orders.%d = %d\nlimit.invoices.%d = %d\n\n", i, 100+i, i, 50+i)
	}
	return f.Name()
}
