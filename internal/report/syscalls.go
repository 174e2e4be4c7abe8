package report

import (
	"fmt"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// syscallLine sums up the CPU in system calls for the CPU headline: the
// program's paths by name, then the runtime's own calls together, so a
// service that spends its CPU writing to sockets says so at the top.
func syscallLine(sc *profiles.Syscalls) string {
	if sc == nil || sc.Value == 0 {
		return ""
	}
	var program []string
	var runtime float64
	for _, p := range sc.Paths {
		if p.By == profiles.ByRuntime {
			runtime += p.Share
			continue
		}
		program = append(program, p.Path+" "+units.Percent(p.Share))
	}
	line := "system calls " + units.Percent(sc.Share) + " of CPU"
	var parts []string
	if len(program) > 0 {
		parts = append(parts, "made by the program: "+strings.Join(program, ", "))
	}
	if runtime > 0 {
		parts = append(parts, "the runtime's own (scheduler, netpoll, memory) "+units.Percent(runtime))
	}
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, "; ")
	}
	return line
}

// syscallBlock lists the paths to the system calls, with the function
// that led to each, so a share in the kernel points back at code.
func syscallBlock(sc *profiles.Syscalls) (block, bool) {
	if sc == nil || len(sc.Paths) == 0 {
		return block{}, false
	}
	tb := &table{
		header: []string{"cpu", "%", "path", "made by", "through", "called from", "user function"},
		right:  []bool{true, true, false, false, false, false, false},
		code:   []bool{false, false, false, false, true, true, true},
	}
	for _, p := range sc.Paths {
		tb.add(units.Value(p.Value, sc.Unit), units.Percent(p.Share), p.Path, p.By, p.Via, p.Caller, p.User)
	}
	caption := fmt.Sprintf("System calls by the path that led to them (%s of CPU in the kernel)", units.Percent(sc.Share))
	return block{caption: caption, table: tb}, true
}
