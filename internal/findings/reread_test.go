package findings

import (
	"strings"
	"testing"
)

func TestReread(t *testing.T) {
	checkRule(t, "reread", "reread", nil)
}

// TestRereadParse diagnoses a handler that calls a function which reads a
// file and hands it to a parser of its own: the finding charges the parse
// with the read, what caching would save, not the read alone.
func TestRereadParse(t *testing.T) {
	fs := checkRule(t, "reread", "rereadparse", nil)
	for _, f := range fs {
		read, parse := readAndParse(f)
		total := cpuShare(f)
		t.Logf("read %.1f%%, parse %.1f%%, finding %.1f%% of CPU", 100*read, 100*parse, 100*total)
		if read <= 0 || parse <= 0 {
			t.Fatalf("the finding does not show both the read and the parse: %s", describe(f))
		}
		if total < 3*read || total < read+parse-1e-9 {
			t.Errorf("the finding charges %.1f%% of CPU, not the read (%.1f%%) and the parse (%.1f%%)", 100*total, 100*read, 100*parse)
		}
		if !strings.Contains(plain(f.Summary), "reads and parses") || !strings.Contains(plain(f.Summary), "parseConfig") && !hasCall(f, "main.parseConfig") {
			t.Errorf("the finding does not name the parse: %s", describe(f))
		}
	}
}

// TestRereadReturned diagnoses a handler that gets a file's bytes from a
// helper that reads and returns them, and parses them itself: the read's
// value is followed across the return, so the finding is the handler's
// and charges the parse, not the helper's small read alone.
func TestRereadReturned(t *testing.T) {
	fs := checkRule(t, "reread", "rereadreturn", nil)
	for _, f := range fs {
		read, parse := readAndParse(f)
		if strings.HasPrefix(plain(f.Summary), "main.readData") {
			t.Errorf("the helper that returns what it read has a finding of its own: %s", describe(f))
		}
		t.Logf("read %.1f%%, parse %.1f%%, finding %.1f%% of CPU", 100*read, 100*parse, 100*cpuShare(f))
		if parse < 3*read || !strings.Contains(plain(f.Summary), "reads and parses") || !hasCall(f, "main.parseTransactions") {
			t.Errorf("the finding does not charge the parse the read's value flows into: %s", describe(f))
		}
	}
}

// TestRereadWithoutSource checks what the rule can say without the
// source: the decoding the reading function does itself counts with the
// read; a parser of the program's own is not seen.
func TestRereadWithoutSource(t *testing.T) {
	for program, want := range map[string]string{"reread/bad": "reads and parses a file", "rereadparse/bad": "reads a file on"} {
		fs, _ := Diagnose(withoutSource(t, program), nil, Options{Rules: []string{"reread"}})
		if len(fs) == 0 || !strings.Contains(plain(fs[0].Summary), want) {
			t.Errorf("%s without source: want a finding that %q, got %v", program, want, fs)
		}
	}
}

// readAndParse are the shares of CPU a reread finding's evidence charges
// to reading and to parsing.
func readAndParse(f Finding) (read, parse float64) {
	for _, ev := range f.Evidence {
		for _, m := range ev.Measures {
			if m.Resource != CPU {
				continue
			}
			switch {
			case strings.HasPrefix(plain(ev.Detail), "reads a file"):
				read += m.Share
			case strings.HasPrefix(plain(ev.Detail), "parses what was read"):
				parse += m.Share
			}
		}
	}
	return read, parse
}

// cpuShare is the share of CPU a finding's evidence adds up to.
func cpuShare(f Finding) float64 {
	s := 0.0
	for _, ev := range f.Evidence {
		for _, m := range ev.Measures {
			if m.Resource == CPU {
				s += m.Share
			}
		}
	}
	return s
}

func hasCall(f Finding, call string) bool {
	for _, ev := range f.Evidence {
		if ev.Call == call {
			return true
		}
	}
	return false
}
