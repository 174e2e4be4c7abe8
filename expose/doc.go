// Package expose serves a Go service's profiles safely: on a listener of its
// own, never on the application's mux, on loopback unless authenticated, with
// mutex profiling switched on, and block profiling while a profile is being
// collected, at rates cheap enough for production.
// It is opinionated: profiling endpoints are an operator's tool, so they get
// their own port, refuse what would mislead (a second concurrent CPU profile,
// a 28-hour profile request) with a clear status code, and requests are
// labelled by route so a profile can be split by endpoint.
//
// # Endpoints
//
// Start serves, under its own address (127.0.0.1:6060 by default):
//
//	/debug/pprof/              index of profiles (net/http/pprof)
//	/debug/pprof/cmdline       the command line
//	/debug/pprof/profile       CPU profile; seconds=N (default 30, at most Options.MaxSeconds)
//	/debug/pprof/trace         execution trace; seconds=N (default 1)
//	/debug/pprof/symbol        symbol lookup (GET or POST); at most 16384
//	                           addresses, a posted list of at most 256 KiB
//	/debug/pprof/allocs, heap, block, mutex, goroutine, threadcreate
//	                           named profiles; debug=N for text, seconds=N for a delta
//	/debug/pprof/wall          wall-clock profile (on- and off-CPU) via fgprof;
//	                           seconds=N (default 30), format=pprof (default) or folded
//	/debug/metrics             runtime/metrics snapshot as JSON, with the
//	                           requests Middleware counted
//
// A seconds value that is not a positive number, or is larger than
// Options.MaxSeconds, is answered with 400. Only one CPU profile, one trace and
// one wall-clock profile may run at a time; a second concurrent request of the
// same kind, or a CPU profile or trace requested while the process is
// profiled or traced by other means, is answered with 409 Conflict instead
// of net/http/pprof's 500.
//
// # Limits
//
// A request costs the server no more than its own bounds, whatever its
// client sends. A symbol lookup's address list is at most 256 KiB when
// posted and at most 16384 addresses; go tool pprof sends a few thousand
// at most. Its answer, a line for each address, is bounded with it: about
// 1 MiB for function names of 50 bytes. A longer body is refused with 413,
// a longer list with 400. The other endpoints take no body, and refuse one
// of more than 4 KiB with 413. Each refusal is one line of plain text, and
// the connection is closed without reading the rest of the body. (A
// request refused before it reaches an endpoint, with 401, 404 or 405, has
// its body read and thrown away by net/http, at most 256 KiB of it.)
//
// A request's header must arrive within 10 seconds and be at most 64 KiB,
// the URL included; the whole request within 30 seconds, or it is answered
// with 408 and its connection closed. An answer must be written within 30
// seconds of the request having been read, an answer to a request for a
// profile or trace over seconds=N within N more seconds, so a capture of
// Options.MaxSeconds is never cut short. A connection waiting for its next
// request is closed after 2 minutes.
//
// # Block profiles
//
// Block profiling is on while a profile is being collected: while a CPU
// profile, an execution trace, a wall-clock profile or a block profile with
// seconds=N is being taken, and for 10 seconds after. Take a block profile
// over a window,
//
//	go tool pprof http://127.0.0.1:6060/debug/pprof/block?seconds=30
//
// or snapshots of the cumulative one at the start and end of a CPU profile,
// as perfscope profile and continuous profilers that take CPU profiles do.
// Blocking outside those windows is not recorded, because block profiling
// costs every goroutine that blocks (see Overhead). Options.BlockProfileAlways
// keeps it on.
//
// # Authentication
//
// On a loopback address no authentication is required (set
// Options.RequireAuth to require it anyway, for example on a host shared by
// several users). On any other address Start fails unless Options.Token is
// set, or Options.TLSConfig verifies client certificates (mutual TLS with
// ClientAuth tls.RequireAndVerifyClientCert and ClientCAs). A token is
// accepted only in an "Authorization: Bearer <token>" header, never in the
// query string, where it would end up in access logs and shell history.
//
// # Route labels
//
// Middleware labels each request's goroutine with the profiler labels
// "http.route" (the matched pattern, as in Request.Pattern, for example
// "GET /v1/users/{id}") and "http.method" (the request method), so CPU and
// goroutine profiles can be split by route:
//
//	go tool pprof -tagfocus=http.route="GET /v1/users/{id}" cpu.pb.gz
//
// Goroutines a handler starts inherit the labels. Middleware labels the
// goroutine alone, without allocating: putting the labels in the request's
// context as well would take a copy of every request. A handler that adds
// labels of its own starts from RouteContext(r), which holds the route's:
//
//	pprof.Do(expose.RouteContext(r), pprof.Labels("tenant", t), f)
//
// Where handlers, or libraries they pass the request's context to, read or
// add labels through r.Context(), ContextMiddleware puts the labels there
// too, at the cost of that copy.
//
// # Request counts
//
// Middleware and ContextMiddleware count the requests they serve, per
// route and method, as each begins: one atomic addition, no allocation.
// /debug/metrics serves the counts since the process started, once either
// middleware has been made: in MetricsSnapshot.Requests by route and
// method, and their total as the cumulative metric
// "/expose/http/requests:requests" (RequestsMetric). perfscope scrape reads
// them each scrape, so that it can compare a service's CPU time per request
// before and after a deploy rather than shares of its profile alone.
//
// # Overhead
//
// The endpoints cost nothing until they are requested: the wall-clock
// profiler and the metrics snapshot run only for a request, and block
// profiling only while a profile is being collected. With no profile being
// taken, a service pays per request for the route labels and for mutex
// profiling. Measured on the leftpad example (bench/expose: 30-35µs of CPU
// per request, more than half of it in system calls) on a 2-CPU virtual
// machine:
//
//   - Middleware: about 0.16µs for finding the route and labelling the
//     goroutine, no allocation: 0.5% of such a request, by CPU profiles.
//     End to end, expose with Middleware cost leftpad 0.7% of its
//     throughput (median of 40 paired rounds).
//   - ContextMiddleware: about 0.55µs, 1.6%: on top of that, the 352-byte
//     copy of the request and its context, and about 0.15µs of garbage
//     collection for that copy, on a service whose requests allocate 3 KB.
//   - Mutex profiling: nothing measurable while locks are not contended.
//   - Block profiling, while on: 0.7-0.8% of the throughput end to end.
//     The runtime reads the CPU's cycle counter twice per blocking
//     operation at any rate, and an HTTP server blocks about once per
//     request (see DefaultBlockProfileRate).
//
// The costs are per request, not per unit of work, so a handler that does
// more than pad a string pays a smaller share: at 350µs a request, a tenth.
// bench/expose/README.md has the end-to-end measurements.
package expose
