package store

import (
	"github.com/perfscope/perfscope/internal/bench"
)

// BenchRunOf turns a finished "perfscope bench" run into what SaveBenchRun
// stores: its metadata, every parsed result line and the instruction
// profiles of its counted benchmarks. The error is for a profile that
// cannot be encoded.
func BenchRunOf(rec *bench.RunRecord) (BenchRun, error) {
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
	var err error
	run.InstructionProfiles, err = instructionProfilesOf(rec, run.Package)
	return run, err
}
