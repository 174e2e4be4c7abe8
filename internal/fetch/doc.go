// Package fetch reads pprof profiles from outside: from a service's pprof
// endpoints, from uploads, from files named on the command line. It is
// opinionated on two points. Every such profile is read through Parse,
// which bounds what one profile may cost — its size, its counts and the
// memory parsing it takes — before parsing it, so that no input, however
// built, takes a reader down. And a pprof endpoint's profiles are only
// about a service once the endpoint has proven it belongs to that
// service's process (ProveIdentity): a number about another process,
// printed as the service's, is silently wrong.
//
// # Endpoints
//
// An Endpoint is one pprof base URL and how to reach it (a client or TLS
// configuration, headers, a bearer token as perfscope's expose package
// requires off loopback, a timeout, read limits). Its calls each make one
// request, bounded by the timeout plus the window they wait for:
//
//	Snapshot(ctx, name)      a profile as it stands (cumulative allocs, heap, block, mutex)
//	Goroutines(ctx)          every goroutine's stack now
//	CPU(ctx, window)         a CPU profile over the next window, whole seconds
//	Delta(ctx, name, window) a delta over the next window, made by the server (?seconds=)
//	SupportsDelta(ctx)       whether the server makes deltas (ErrNoDelta otherwise)
//
// DeltaBetween makes a delta from two snapshots instead, for servers that
// make none and for windows whose length is only known once they end. A
// failed fetch is an *Error: one line naming the profile and its URL
// (redacted, as every URL this package shows), with the HTTP status, the
// server's first line, and whether the server was reached at all.
//
// Discover finds a service's endpoint (a given URL; else the service's
// origin + /debug/pprof/; else, on this machine, a fallback such as
// DefaultLocalURL); ProveIdentity then checks it belongs to the process
// serving the service. They are separate calls: a caller that cannot
// prove (a proxy in between) may still use the endpoint, and say so.
//
// # Callers
//
// perfscope profile (package capture) uses one endpoint for one load
// window: it discovers and proves it before the load, takes snapshots at
// the window's start and end and subtracts them, and covers the window
// with consecutive CPU requests, because a load bounded by a request
// count has a window of unknown length.
//
// Continuous profiling scrapes many targets, each every interval. The
// sketch it is built for:
//
//	client := &http.Client{...}                  // shared by all targets
//	for each target:                             // from configuration or discovery
//		e, err := fetch.NewEndpoint(t.PprofURL, fetch.EndpointOptions{
//			Client: client, Token: t.Token, Timeout: t.Timeout})
//		// or: d, err := fetch.Discover(ctx, t.URL, ...); e := d.Endpoint
//		err = fetch.ProveIdentity(ctx, e, t.URL)  // once, and again after the target restarts
//		deltas, err := e.SupportsDelta(ctx)       // once per target
//	every interval, per target, under a context with the scrape's deadline:
//		cpu, err := e.CPU(ctx, interval)          // the interval, whole seconds
//		heap, err := e.Delta(ctx, "allocs", interval)
//		//   without deltas: Snapshot each interval, DeltaBetween the last two
//		g, err := e.Goroutines(ctx)
//		// errors.As(err, &fe): fe.Unreachable (target down: back off),
//		// fe.CPUBusy() (another profiler runs), fe.Unauthorized()
//
// The CPU and delta requests of one target run side by side, each the
// interval long, so one scrape takes one interval whatever it collects.
// Nothing here keeps state between calls: schedules, backoff and health
// are the scraper's.
package fetch
