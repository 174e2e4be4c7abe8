package store

import (
	"github.com/perfscope/perfscope/internal/bench"
)

// BenchRunOf turns a finished "perfscope bench" run into what SaveBenchRun
// stores: its metadata and every parsed result line.
func BenchRunOf(rec *bench.RunRecord) BenchRun {
	run := BenchRun{
		Commit:      rec.Meta.Commit,
		Branch:      rec.Meta.Branch,
		Dirty:       rec.Meta.Dirty,
		CommitTime:  rec.Meta.CommitTime,
		Subject:     rec.Meta.Subject,
		Author:      rec.Meta.Author,
		Time:        rec.Meta.Time,
		GoVersion:   rec.Meta.GoVersion,
		Interrupted: rec.Interrupted,
		Machine: Machine{
			Hostname: rec.Meta.Machine,
			GOOS:     rec.Meta.GOOS,
			GOARCH:   rec.Meta.GOARCH,
			CPU:      rec.Meta.CPU,
		},
	}
	if len(rec.Packages) == 1 {
		run.Package = rec.Packages[0].ImportPath
	}
	if rec.Results != nil {
		run.Results = rec.Results.Results
	}
	return run
}
