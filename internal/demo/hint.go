package demo

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// APIPath is the request each bundled example answers as its seed article
// first sent it: the path to load it with.
var APIPath = map[string]string{
	"leftpad":   LeftpadPath,
	"txsummary": "/summary",
}

// ProfileCommand is the command line that profiles the example name from
// its startup line ("… listening on http://ADDR, pprof on http://PPROF/debug/pprof/"):
// its API URL, quoted for the shell, with the pprof endpoint it serves. An
// example that serves no profiles gets the load command instead; a line
// that is not a startup line gets "".
func ProfileCommand(name, line string) string {
	m := startupLine.FindStringSubmatch(line)
	path, ok := APIPath[name]
	if m == nil || !ok {
		return ""
	}
	target := shellQuote(m[1] + path)
	if m[2] == "" {
		return "perfscope load " + target
	}
	return "perfscope profile --pprof " + m[2] + " " + target
}

// shellQuote quotes s in single quotes for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WithProfileHint returns a writer that passes the example name's output to
// w and, right after its startup line, adds a line with the command that
// profiles it (see ProfileCommand): the startup line names two ports, and
// the request path and which port takes --pprof are not obvious from it.
// Flush writes a first line that never ended.
func WithProfileHint(w io.Writer, name string) *HintWriter {
	return &HintWriter{w: w, name: name}
}

// A HintWriter is the writer WithProfileHint returns.
type HintWriter struct {
	w    io.Writer
	name string

	mu   sync.Mutex
	line []byte // the first line, until it is complete
	done bool   // the first line has been written
}

// maxLine is how much of a first line is held back waiting for its end.
const maxLine = 4096

func (h *HintWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return h.w.Write(p)
	}
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		h.line = append(h.line, p...)
		if len(h.line) > maxLine {
			return len(p), h.flush()
		}
		return len(p), nil
	}
	h.done = true
	line := append(h.line, p[:i+1]...)
	h.line = nil
	out := line
	if cmd := ProfileCommand(h.name, string(line)); cmd != "" {
		out = append(out, "try: "+cmd+"\n"...)
	}
	out = append(out, p[i+1:]...)
	if _, err := h.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held of a first line that has not ended.
func (h *HintWriter) Flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.flush()
}

func (h *HintWriter) flush() error {
	h.done = true
	line := h.line
	h.line = nil
	if len(line) == 0 {
		return nil
	}
	_, err := h.w.Write(line)
	return err
}

// PortHint is what to do about an example's error line that says a port is
// taken: which flag moves it, and that port 0 picks a free one. Any other
// line gets "".
func PortHint(line string) string {
	if !strings.Contains(line, "address already in use") {
		return ""
	}
	flag := "--addr"
	if strings.Contains(line, "pprof") {
		flag = "--pprof-addr"
	}
	return "another program holds the port: choose another with " + flag + ", or " + flag + " 127.0.0.1:0 for any free one"
}

// WithPortHint returns a writer that passes an example's error output to w
// and follows a write that says a port is taken with the line PortHint
// gives: the examples' default ports (8080, 6060) are ones other programs
// often hold.
func WithPortHint(w io.Writer) io.Writer { return portHintWriter{w} }

type portHintWriter struct{ w io.Writer }

func (p portHintWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil {
		return n, err
	}
	if hint := PortHint(string(b)); hint != "" {
		if _, err := io.WriteString(p.w, "hint: "+hint+"\n"); err != nil {
			return n, err
		}
	}
	return n, nil
}
