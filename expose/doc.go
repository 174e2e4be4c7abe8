// Package expose serves a Go service's profiles safely: on a listener of its
// own, never on the application's mux, on loopback unless authenticated, with
// block and mutex profiling switched on at rates cheap enough for production.
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
//	/debug/pprof/symbol        symbol lookup (GET or POST)
//	/debug/pprof/allocs, heap, block, mutex, goroutine, threadcreate
//	                           named profiles; debug=N for text, seconds=N for a delta
//	/debug/pprof/wall          wall-clock profile (on- and off-CPU) via fgprof;
//	                           seconds=N (default 30), format=pprof (default) or folded
//	/debug/metrics             runtime/metrics snapshot as JSON
//
// A seconds value that is not a positive number, or is larger than
// Options.MaxSeconds, is answered with 400. Only one CPU profile, one trace and
// one wall-clock profile may run at a time; a second concurrent request of the
// same kind, or a CPU profile or trace requested while the process is
// profiled or traced by other means, is answered with 409 Conflict instead
// of net/http/pprof's 500.
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
package expose
