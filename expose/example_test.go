package expose_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"

	"github.com/perfscope/perfscope/expose"
)

// A service serves its application on one port and its profiles on
// another, loopback-only one.
func ExampleStart() {
	ctx := context.Background()
	prof, err := expose.Start(ctx, expose.Options{Addr: "127.0.0.1:0"}) // 127.0.0.1:6060 when Addr is empty
	if err != nil {
		log.Fatal(err)
	}
	defer prof.Close()

	resp, err := http.Get(prof.URL() + "cmdline")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output: 200 OK
}

// Listening on every interface requires a token (or mutual TLS); clients send
// it as "Authorization: Bearer <token>", for example
// curl -H "Authorization: Bearer $PPROF_TOKEN" http://host:6060/debug/pprof/heap.
func ExampleStart_token() {
	_, err := expose.Start(context.Background(), expose.Options{Addr: "0.0.0.0:0"})
	fmt.Println(err != nil)

	prof, err := expose.Start(context.Background(), expose.Options{
		Addr:  "0.0.0.0:0",
		Token: os.Getenv("PPROF_TOKEN") + "a-token-of-at-least-16-characters",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer prof.Close()
	fmt.Println("serving")
	// Output:
	// true
	// serving
}

// Wrap the application's mux so profiles can be split by route. A handler
// that adds profiler labels of its own starts from RouteContext, which holds
// the route's labels.
func ExampleMiddleware() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(expose.RouteContext(r), pprof.Labels("tenant", "acme"), func(ctx context.Context) {
			pprof.ForLabels(ctx, func(key, value string) bool {
				fmt.Printf("%s=%s\n", key, value)
				return true
			})
		})
	})
	handler := expose.Middleware(mux) // pass this to http.Server

	handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/users/42", nil))
	// Unordered output:
	// http.method=GET
	// http.route=GET /users/{id}
	// tenant=acme
}

// Where handlers, or libraries they hand the request's context to, read or
// add profiler labels through that context, ContextMiddleware puts the
// labels there too, at the cost of a copy of the request.
func ExampleContextMiddleware() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		route, _ := pprof.Label(r.Context(), expose.LabelRoute)
		method, _ := pprof.Label(r.Context(), expose.LabelMethod)
		fmt.Println(route, "|", method)
	})
	handler := expose.ContextMiddleware(mux) // pass this to http.Server

	handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/users/42", nil))
	// Output: GET /users/{id} | GET
}
