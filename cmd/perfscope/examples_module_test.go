//go:build linux

package main

import (
	"crypto/subtle"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The scratch module the examples run in: what a user's service looks like
// to perfscope.
var (
	scratchGoMod = "module example.com/svc\n\ngo 1.26\n"

	scratchIgnore = ".perfscope/\n*.txt\n*.pb.gz\n*.json\ngate.md\ngate-results/\n"

	scratchParseSlow = `// Package parse splits comma-separated fields.
package parse

// Parse returns the fields of s.
func Parse(s string) []string {
	var out []string
	field := ""
	for _, r := range s {
		if r == ',' {
			out = append(out, field)
			field = ""
			continue
		}
		field += string(r)
	}
	return append(out, field)
}
`

	scratchParseFast = `// Package parse splits comma-separated fields.
package parse

import "strings"

// Parse returns the fields of s.
func Parse(s string) []string {
	return strings.Split(s, ",")
}
`

	scratchParseTest = `package parse

import (
	"strings"
	"testing"
)

var sink []string

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{10, 1000} {
		in := strings.Repeat("ab,", n)
		b.Run("size="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink = Parse(in)
			}
		})
	}
}

func itoa(n int) string {
	if n == 10 {
		return "10"
	}
	return "1000"
}
`

	// The server labels each request with its route, as expose.Middleware
	// does, and serves net/http/pprof on its own origin.
	scratchServer = `// Command server is a small HTTP service to profile.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"runtime/pprof"
	"strings"

	"example.com/svc/internal/parse"
)

type user struct {
	ID     string   ` + "`json:\"id\"`" + `
	Fields []string ` + "`json:\"fields\"`" + `
}

type tx struct {
	Amounts []float64 ` + "`json:\"amounts\"`" + `
}

func route(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		labels := pprof.Labels("http.route", pattern, "http.method", r.Method)
		pprof.Do(r.Context(), labels, func(context.Context) { h(w, r) })
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on")
	flag.Parse()
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/", http.DefaultServeMux)
	route(mux, "GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d fields\n", len(parse.Parse(strings.Repeat("ab,", 20))))
	})
	route(mux, "GET /api", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"fields": parse.Parse("a,b,c")})
	})
	route(mux, "GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		u := user{ID: r.PathValue("id"), Fields: parse.Parse(strings.Repeat(r.PathValue("id")+",", 50))}
		json.NewEncoder(w).Encode(u)
	})
	route(mux, "POST /tx", func(w http.ResponseWriter, r *http.Request) {
		var t tx
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil || len(t.Amounts) == 0 {
			http.Error(w, "want {\"amounts\": [...]}", http.StatusBadRequest)
			return
		}
		sum := 0.0
		for _, a := range t.Amounts {
			sum += a
		}
		json.NewEncoder(w).Encode(map[string]float64{"sum": sum})
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
`
)

// scratchModule writes the module into dir as a git repository of five
// commits on main, an hour apart, with a bare clone of it as its origin,
// and returns the commits, oldest first. The parser is slow at the first
// two commits and fast from the third on; the others change only the
// server, so main, HEAD~1 and origin/main build the same benchmarks.
func scratchModule(t *testing.T, dir string) []string {
	t.Helper()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	git := func(age int, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=dev", "-c", "user.email=dev@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		stamp := now.Add(-time.Duration(age) * time.Hour).Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+stamp, "GIT_COMMITTER_DATE="+stamp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	server := func(comment string) {
		write("cmd/server/main.go", strings.Replace(scratchServer, "is a small HTTP service to profile.", comment, 1))
	}
	write("go.mod", scratchGoMod)
	write(".gitignore", scratchIgnore)
	write("internal/parse/parse.go", scratchParseSlow)
	write("internal/parse/parse_test.go", scratchParseTest)
	server("is a small HTTP service to profile.")
	git(0, "init", "-q", "-b", "main")
	git(0, "add", ".")
	git(5, "commit", "-q", "-m", "parse: first version")
	server("is a small HTTP service.")
	git(4, "commit", "-q", "-a", "-m", "server: doc")
	write("internal/parse/parse.go", scratchParseFast)
	git(3, "commit", "-q", "-a", "-m", "parse: split without building each field")
	server("serves the parser over HTTP.")
	git(2, "commit", "-q", "-a", "-m", "server: doc")
	server("serves the parser over HTTP, with profiles.")
	git(1, "commit", "-q", "-a", "-m", "server: doc")
	origin := filepath.Join(filepath.Dir(dir), "origin.git")
	git(0, "clone", "-q", "--bare", dir, origin)
	git(0, "remote", "add", "origin", origin)
	git(0, "fetch", "-q", "origin")
	return strings.Fields(git(0, "rev-list", "--reverse", "main"))
}

// serveTLSAPI serves https://…/api and net/http/pprof behind a Bearer token
// and writes its certificate as a PEM file for SSL_CERT_FILE; it returns
// the server's host:port and the PEM file.
func serveTLSAPI(t *testing.T, token, dir string) (string, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
			http.Error(w, "token needed", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	// perfscope's proof that the endpoint is the target's opens idle
	// connections and closes them unused: no handshake to log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pemFile := filepath.Join(dir, "svc-cert.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(pemFile, block, 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(srv.URL, "https://"), pemFile
}
