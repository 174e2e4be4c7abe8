package findings

import (
	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the not-bottleneck rule.
const (
	// idleUsedShare: the target kept busy less than this share of the
	// cores it could use.
	idleUsedShare = 0.05
	// idleCores is the absolute bound used when the available cores are
	// unknown: a tenth of one core.
	idleCores = 0.1
	// syscallShare: system calls and the network poller took at least
	// this share of CPU.
	syscallShare = 0.60
)

// inKernelOrPoller accepts a stack in a system call (a frame of the
// syscall class: profiles.SyscallFunctions) or in the network poller.
func inKernelOrPoller(fs []frame) bool {
	for _, f := range fs {
		if f.class == profiles.Syscall || f.fn == "runtime.netpoll" {
			return true
		}
	}
	return false
}

func idleRule() Rule {
	return Rule{
		ID:        "not-bottleneck",
		Title:     "The profile does not show a busy service",
		Summary:   "the target used little of its CPU, or mostly ran system calls: its profile is mostly noise",
		Resources: []Resource{Idle, CPU},
		Explanation: sentence(`
A CPU profile shows where a program spends the CPU it uses. When it uses
little (the load was too light, or requests wait on a database, a downstream
service or the network), the profile holds few samples and its hottest
functions are noise: optimizing them will not change throughput or latency.
When most of the CPU goes into system calls and the network poller, the
service mostly moves bytes: the kernel, the network or the client is the
limit, not its code.

The rule fires when the target kept busy less than {} of the cores it could
use (when the available cores are known; otherwise less than {} of a core),
or when system calls and the network poller take at least {} of CPU. Look at
latency and the load generator instead: raise the load (more connections, a
higher rate), profile the dependency, or look at the block profile for what
requests wait on.`,
			share(idleUsedShare), cores(idleCores), share(syscallShare)),
		Fix: Fix{
			Summary: "Make the service the bottleneck before optimizing its code: raise the load until its CPU is busy or its latency rises, or find what requests wait on (block profile, traces of the dependency).",
			Example: `# more load: more connections for longer
perfscope profile -c 64 -d 30s http://127.0.0.1:8080/

# what requests wait on
perfscope report --format text RUN   # see the block section`,
		},
		check: checkIdle,
	}
}

func checkIdle(e *env, r *Rule) []Finding {
	pr, _ := e.resource(CPU)
	if pr == nil {
		return nil
	}
	total := e.total(CPU)
	secs := 0.0
	if e.a.CPU != nil && e.a.CPU.Seconds > 0 {
		secs = e.a.CPU.Seconds
	} else if pr.p.DurationNanos > 0 {
		secs = float64(pr.p.DurationNanos) / 1e9
	}
	var out []Finding
	if secs > 0 {
		used := float64(total) / 1e9 / secs
		avail := e.opts.AvailableCores
		low := (avail > 0 && used < idleUsedShare*avail) || (avail <= 0 && used < idleCores)
		if low {
			ev := Evidence{
				Function: "(whole profile)",
				Measures: []Measure{{Resource: CPU, Value: total, Unit: "nanoseconds", Share: 1}},
				Detail:   sentence("{} cores busy on average over {}", cores(used), seconds(secs)),
			}
			// Without a load result (a live service's own traffic) nothing
			// says how much was asked of it: no claim about the load.
			why := "the load was too light or requests wait on something else"
			if e.a.Run.Load == nil {
				why = "it had little to do over the window or its requests wait on something else"
			}
			var summary Text
			sev := 1.0
			if avail > 0 {
				sev = 1 - used/avail
				ev.Detail = sentence("{} of {} available", ev.Detail, count(avail))
				summary = sentence("The target kept {} of its {} cores busy ({}): {}, so this CPU profile is mostly noise.",
					cores(used), count(avail), share(used/avail), why)
			} else {
				summary = sentence("The target kept only {} cores busy: {}, so this CPU profile is mostly noise.", cores(used), why)
			}
			out = append(out, r.finding(sev, Idle, summary, []Evidence{ev}))
		}
	}
	sys := e.stackSum(CPU, inKernelOrPoller)
	if s := profiles.Share(sys, total); e.enoughCPU(sys) && s >= syscallShare {
		ev := Evidence{Function: "(system calls and network poller)", Measures: []Measure{e.measure(CPU, sys)}}
		summary := sentence("System calls and the network poller take {} of CPU: the service mostly moves bytes, so the kernel, the network or the client limits it more than its code.", share(s))
		out = append(out, r.finding(s, CPU, summary, []Evidence{ev}))
	}
	return out
}
