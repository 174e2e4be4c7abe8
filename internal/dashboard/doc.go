// Package dashboard composes what perfscope's dashboard shows: each page's
// view model (internal/report/web) and each read endpoint's answer, from
// the query as typed, the store, history, the analyses and the profile
// series. It is the server's room for everything but HTTP: the server
// reads a request, calls one function here, and renders what comes back
// as a page or JSON; nothing here knows a request, a header or a status.
//
// What went wrong is told by kind, for the server to map to a status:
// ErrNotFound for what the query names and does not exist, ErrBadInput
// for a query that cannot be read, ErrUnavailable for an analysis not
// done yet; the message is the one line the user reads. A page with a
// form (compare, service, deploys, leaks) comes back together with its
// error, so that the form keeps what was typed and says what was wrong.
//
// Where things live:
//
//	query.go        filters, series, comparison and report options read from a query
//	bench.go        benchmark list and trend, change detection cached by store version
//	compare.go      two commits (benchstat's tables) or two runs side by side
//	home.go         what changed lately: commits, runs, deploys
//	runs.go         runs read from the index, their analyses, the runs list and a run's page
//	watch.go        the services and a service's page over scraped profiles
//	watchforms.go   the deploys and leaks pages
//	profiles.go     the profile-series endpoints' queries and answers
//	benchupload.go  the run a benchmark upload stores
package dashboard
