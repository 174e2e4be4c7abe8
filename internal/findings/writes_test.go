package findings

import (
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

func TestSmallWrites(t *testing.T) {
	checkRule(t, "small-writes", "writes", nil)
}

// TestSmallWritesBuffered checks that log lines written through a 16 KiB
// bufio.Writer are not small writes, although their write system calls
// take a share of CPU above the rule's threshold: the rule saw them and
// left them out for the buffer in their stacks.
func TestSmallWritesBuffered(t *testing.T) {
	t.Parallel()
	const program = "writes/buffered"
	checkQuiet(t, "small-writes", program, nil)
	p := workload(t, program).Profiles[run.KindCPU]
	vi, err := profiles.SampleIndex(p, profiles.SampleCPU)
	if err != nil {
		t.Fatal(err)
	}
	var buffered int64
	for _, s := range p.Sample {
		var file, bufio, user bool
		for _, f := range profiles.Frames(s) {
			if fn := f.Function(); fn != nil {
				file = file || fn.Name == "os.(*File).Write"
				bufio = bufio || strings.HasPrefix(fn.Name, "bufio.(*Writer).")
				user = user || strings.HasPrefix(fn.Name, "main.")
			}
		}
		if file && bufio && user {
			buffered += s.Value[vi]
		}
	}
	if share := profiles.Share(buffered, profiles.SampleTotal(p, vi)); share < writesServingCPU {
		t.Errorf("the buffered writes take %.2f%% of CPU, under the rule's threshold of %.0f%%: the run does not show that the buffer is what keeps the rule quiet",
			100*share, 100*writesServingCPU)
	}
}

// TestSmallWritesFlushed checks that a buffer flushed after every line
// does not hide the writes: the line that flushes is named.
func TestSmallWritesFlushed(t *testing.T) {
	t.Parallel()
	for _, f := range checkFires(t, "small-writes", "writes/flushed", nil) {
		if !strings.Contains(plain(f.Summary), "flushes a buffer") || strings.Contains(plain(f.Summary), "without buffering") {
			t.Errorf("the summary does not say that the buffer is flushed on every call: %s", plain(f.Summary))
		}
	}
}
