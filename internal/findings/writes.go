package findings

import (
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the small-writes rule, for the write system calls started
// at one line.
const (
	// writesServingCPU: a file or log written unbuffered while serving
	// requests. Such writes are cheap one by one (the page cache takes
	// them), so their CPU share is small even when there is one per
	// request; the fix is always the same and safe.
	writesServingCPU = 0.01
	// writesServingSamples is the fewest CPU samples that threshold rests on.
	writesServingSamples = 2
	// writesCPU: a file or log written unbuffered outside requests, or a
	// socket written once per item of a loop.
	writesCPU = 0.03
)

// writeFuncs are the functions every unbuffered write of a file, a pipe
// or a socket goes through on its way into the kernel.
var writeFuncs = matcher{
	"internal/poll.(*FD).Write", "internal/poll.(*FD).Pwrite", "internal/poll.(*FD).WriteTo",
	"internal/poll.(*FD).WriteMsg*", "internal/poll.(*FD).Writev",
	"syscall.write", "syscall.Write", "syscall.pwrite", "syscall.sendto", "syscall.sendmsg",
}

// bufferingWriters gather small writes in memory and write them out a
// buffer at a time: a write system call below one of them carries a
// buffer, not a line, however small the lines written into it.
var bufferingWriters = matcher{"bufio.(*Writer).*", "bufio.(*ReadWriter).*", "bufio.ReadWriter.*", "bytes.(*Buffer).WriteTo"}

// flushFuncs empty a buffer on request.
var flushFuncs = matcher{"bufio.(*Writer).Flush", "bufio.(*ReadWriter).Flush", "bufio.ReadWriter.Flush"}

// buffered reports whether the write at fs[i], started by the user frame
// fs[j], went through a buffer: a buffering writer lies between them, and
// the user's line did not flush it itself while serving a request (a
// flush per request is a write per request, whatever the buffer's size).
func buffered(fs []frame, i, j int) bool {
	if !anyFrame(fs[i+1:j], bufferingWriters.match) {
		return false
	}
	return !flushFuncs.match(fs[j-1].fn) || !anyFrame(fs, servingFuncs.match)
}

func writesRule() Rule {
	return Rule{
		ID:        "small-writes",
		Title:     "Many small write system calls",
		Summary:   "a file, log or socket is written unbuffered, one system call per line or per message",
		Resources: []Resource{CPU},
		Explanation: sentence(`
Every Write on an *os.File or a net.Conn is a system call: a switch into the
kernel that costs about a microsecond or more whatever the size. Writing an
access log line, a metric or a small message at a time, per request, spends
that cost on every request; a log.Logger on a file does it while holding its
mutex, so concurrent requests also queue behind each other's writes.

The rule charges CPU samples in the write path (internal/poll.(*FD).Write,
syscall.write, sendto, ...) to the line of your code that started the write,
directly or through log, fmt.Fprint* or a client library, and looks at what was
written: a file or a log (os.(*File).Write, log.(*Logger).output) or a socket.
It fires on:
  - a file or log written while serving requests, from {} of CPU (at least {}
    samples): one write per request is cheap for the kernel, so its share stays
    small, but it is never needed;
  - a file or log written elsewhere, from {} of CPU;
  - a socket written inside a loop (one packet per item, where one per batch
    would do), from {} of CPU; this needs the source to see the loop.
One write per request to a socket is not flagged: it is often the protocol.

Writes that go through a buffer are not counted: when a bufio.Writer (or a
bytes.Buffer's WriteTo) lies between your line and the system call, the call
writes the buffer's contents at once, whatever the size of the lines put into
it. That covers a log.Logger or a slog handler writing into a bufio.Writer,
and the responses net/http buffers and writes once per response. A buffer
your line flushes itself while serving a request does count: a Flush per
line or per request is a write system call per line or per request.`,
			share(writesServingCPU), count(writesServingSamples), share(writesCPU), share(writesCPU)),
		Fix: Fix{
			Summary: "Buffer: append lines to a buffer and write it out in batches (a bufio.Writer flushed on a timer, or a goroutine owning the file); batch metrics into one packet.",
			Example: `// before: one write system call per request
logger := log.New(file, "", log.LstdFlags)
logger.Printf("%s %s %d", r.Method, r.URL.Path, status)

// after: lines go to memory; one goroutine writes them every 200ms
w := bufio.NewWriterSize(file, 64<<10)
// under a mutex held only for the append:
w.Write(line)
// in a ticker goroutine:
w.Flush()`,
		},
		check: checkWrites,
	}
}

func checkWrites(e *env, r *Rule) []Finding {
	type lineInfo struct {
		sinks   map[string]int64
		serving int64
		flushed int64 // written by the line's own Flush of a buffer
	}
	info := map[siteKey]*lineInfo{}
	cpu := sites{}
	for fs, v := range e.samples(CPU) {
		i := firstMatch(fs, writeFuncs.match)
		if i < 0 {
			continue
		}
		j := profiles.UserFrame(fs, i, frameClass)
		if j < 0 || buffered(fs, i, j) {
			continue
		}
		f := fs[j]
		cpu.add(f, v, fs[j-1].fn, fs[i].fn)
		k := siteKey{f.fn, f.file, f.line}
		li := info[k]
		if li == nil {
			li = &lineInfo{sinks: map[string]int64{}}
			info[k] = li
		}
		li.sinks[sinkOf(fs[i:j])] += v
		if flushFuncs.match(fs[j-1].fn) {
			li.flushed += v
		}
		if anyFrame(fs, servingFuncs.match) {
			li.serving += v
		}
	}
	period := e.cpuPeriod()
	// Each line qualifies on its own: what it writes to and where decide
	// its threshold.
	qualified := sites{}
	reasons := map[siteKey]string{}
	flushes := map[siteKey]bool{}
	for k, s := range cpu {
		li := info[k]
		sink := profiles.Heaviest(li.sinks)
		file := !strings.Contains(sink, "socket")
		writes := "writes to " + sink
		if flushes[k] = 2*li.flushed > s.value; flushes[k] {
			writes = "flushes a buffer into " + sink
		}
		switch {
		case file && e.share(CPU, li.serving) >= writesServingCPU && li.serving >= writesServingSamples*period:
			reasons[k] = writes + " with one system call per call, while serving requests"
		case file && e.share(CPU, s.value) >= writesCPU && e.enoughCPU(s.value):
			reasons[k] = writes + " with one system call per call"
		case !file && e.share(CPU, s.value) >= writesCPU && e.enoughCPU(s.value) && e.inLoop(&line{siteKey: k}):
			reasons[k] = writes + " once per item of a loop: one packet or system call per item"
		default:
			continue
		}
		qualified[k] = s
	}
	order := []Resource{CPU}
	ls := lines(map[Resource]sites{CPU: qualified}, order...)
	var out []Finding
	for _, g := range e.groups(ls, order, func(map[Resource]float64) bool { return true }) {
		sev, res := g.top(order)
		var evs []Evidence
		var kinds []string
		flushing := true
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			ev.Detail = sentence("{}", reasons[l.siteKey])
			flushing = flushing && flushes[l.siteKey]
			if sink := profiles.Heaviest(info[l.siteKey].sinks); !contains(kinds, sink) {
				kinds = append(kinds, sink)
			}
			evs = append(evs, ev)
		}
		sinks := strings.Join(kinds, " and ")
		how := "writes to " + sinks + " without buffering"
		if flushing {
			how = "flushes a buffer into " + sinks + " on every call, so the buffer saves nothing"
		}
		summary := sentence("{} {}, one system call at a time: {}.", g.fn, how, shareText(g, order))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// sinkOf names what a write path (frames from the write function outward
// to just below the user's line) writes to.
func sinkOf(path []frame) string {
	kind := "a file descriptor"
	for _, f := range path {
		switch {
		case strings.HasPrefix(f.fn, "log.") || strings.HasPrefix(f.fn, "log/slog."):
			return "a log (" + f.fn + ")"
		case strings.HasPrefix(f.fn, "os.(*File)."):
			kind = "a file (os.(*File).Write)"
		case strings.HasPrefix(f.fn, "net.(*UDPConn)"):
			kind = "a UDP socket"
		case strings.HasPrefix(f.fn, "net.(*conn)") || strings.HasPrefix(f.fn, "net.(*TCPConn)") || strings.HasPrefix(f.fn, "net.(*UnixConn)"):
			if kind == "a file descriptor" {
				kind = "a socket (" + f.fn + ")"
			}
		}
	}
	return kind
}
