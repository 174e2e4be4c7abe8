// Package web is the dashboard's rendering: the view models its pages are
// made of, the tables, charts and number formats they show, and the
// functions its templates call. It is report's room for HTML: package
// dashboard asks the store, history, benchstats and analysis for results and hands
// them here to be laid out; nothing here decides what changed, reads a
// store or answers a request.
//
// Values in a benchmark unit are written by measure, as the CLI writes
// them, and comparison tables are report's own (report.BenchTables), so
// the dashboard shows the tables 'perfscope compare' prints, footnotes and
// geomeans included.
package web
