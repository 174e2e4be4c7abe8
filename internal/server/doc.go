// Package server is perfscope's dashboard: an HTTP API under /api/v1/ that
// CI pushes benchmark results and profiling runs to, and server-rendered
// pages that show every benchmark's trend per commit, every run with its
// report and flame graph, and the comparison of any two commits or runs.
//
// The server holds no state of its own besides caches: benchmark history
// lives in the store (SQLite or PostgreSQL), uploaded runs in a data
// directory indexed by the store. An upload is acknowledged only after it is
// on disk and its store transaction has committed, so a server killed at any
// moment loses nothing it acknowledged. Writes need a token; reads are open
// to loopback clients and, with PublicRead, to everyone.
//
// The server is HTTP wiring and templates: routes, access, headers,
// metrics, uploads, and for each page or read endpoint a handler that reads
// the request, asks package dashboard for the page's view model or the
// endpoint's answer, renders it (templates under web/, JSON, pprof's UI)
// and maps the error's kind to a status. What a page shows is composed in
// dashboard and laid out in report/web, never here.
//
// Pages are plain HTML from html/template with a small inline SVG chart and
// no script build step; their state is in the URL, so every view is a link
// that can be shared. Profiles are shown in pprof's own web UI (pprofweb),
// mounted on the same mux; an uploaded run is received and checked by
// runupload before it is indexed.
package server
