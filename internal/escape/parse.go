package escape

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// The compiler's log format (cmd/compile/internal/logopt, version 0): one
// file per source file and package, made of a header record followed by one
// LSP Diagnostic per line. The diagnostic's own range has no file: it is the
// header's. RelatedInformation carries, in order, "inlineLoc" entries for the
// diagnostic's inlined positions, then the escape explanation as "escflow: "
// entries, each followed by its own "inlineLoc" entries.

type logHeader struct {
	Version *int   `json:"version"`
	Package string `json:"package"`
	File    string `json:"file"`
}

type logPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type logRange struct {
	Start logPosition `json:"start"`
	End   logPosition `json:"end"`
}

// valid reports whether r holds positions the compiler could write: it
// writes unsigned numbers.
func (r logRange) valid() bool {
	return r.Start.Line >= 0 && r.Start.Character >= 0 && r.End.Line >= 0 && r.End.Character >= 0
}

type logRelated struct {
	Location struct {
		URI   string   `json:"uri"`
		Range logRange `json:"range"`
	} `json:"location"`
	Message string `json:"message"`
}

type logDiagnostic struct {
	Range              *logRange    `json:"range"`
	Code               string       `json:"code"`
	Message            string       `json:"message"`
	RelatedInformation []logRelated `json:"relatedInformation"`
}

// ParseLog reads one log file the compiler wrote under its -json directory
// and returns its diagnostics, with file paths as the compiler wrote them.
// The input is treated as untrusted: anything malformed is an error that
// names the record, never a panic.
func ParseLog(r io.Reader) ([]Diagnostic, error) {
	diags, err := parseLog(r)
	if err != nil {
		return nil, err
	}
	return finish(diags, nil), nil
}

// parseLog decodes a log file into diagnostics whose Kind, Reason and
// duplicates are not settled yet: that needs the whole package (finish).
func parseLog(r io.Reader) ([]Diagnostic, error) {
	dec := json.NewDecoder(r)
	var h logHeader
	if err := dec.Decode(&h); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty compiler log: no header record")
		}
		return nil, fmt.Errorf("compiler log header: %w", err)
	}
	if h.Version == nil {
		return nil, errors.New("compiler log header: no version field (not a -json=0 log)")
	}
	if *h.Version != 0 {
		return nil, fmt.Errorf("compiler log version %d: only version 0 is supported", *h.Version)
	}
	if h.File == "" {
		return nil, errors.New("compiler log header: no file field")
	}
	var diags []Diagnostic
	for n := 2; ; n++ {
		var ld logDiagnostic
		if err := dec.Decode(&ld); err != nil {
			if errors.Is(err, io.EOF) {
				return diags, nil
			}
			return nil, fmt.Errorf("compiler log %s, record %d: %w", h.File, n, err)
		}
		if ld.Range == nil {
			return nil, fmt.Errorf("compiler log %s, record %d: no range", h.File, n)
		}
		if !ld.Range.valid() {
			return nil, fmt.Errorf("compiler log %s, record %d: negative position", h.File, n)
		}
		if ld.Code == "" {
			return nil, fmt.Errorf("compiler log %s, record %d: no code", h.File, n)
		}
		d := Diagnostic{
			Kind:    kindOf(ld.Code),
			Code:    ld.Code,
			Package: h.Package,
			Pos:     Position{File: h.File, Line: ld.Range.Start.Line, Col: ld.Range.Start.Character},
			Message: ld.Message,
		}
		if ld.Range.End.Line > d.Pos.Line {
			d.EndLine = ld.Range.End.Line
		}
		if err := addRelated(&d, ld.RelatedInformation); err != nil {
			return nil, fmt.Errorf("compiler log %s, record %d: %w", h.File, n, err)
		}
		diags = append(diags, d)
	}
}

// addRelated splits relatedInformation into the diagnostic's inline chain
// and its escape-flow explanation.
func addRelated(d *Diagnostic, rel []logRelated) error {
	flowStarted := false
	for _, r := range rel {
		if !r.Location.Range.valid() {
			return errors.New("negative position in related information")
		}
		pos := Position{File: uriPath(r.Location.URI), Line: r.Location.Range.Start.Line, Col: r.Location.Range.Start.Character}
		msg := r.Message
		switch {
		case msg == "inlineLoc":
			if !flowStarted {
				d.Inlined = append(d.Inlined, pos)
				continue
			}
			// An inline position of the last flow entry: the note's code
			// was written in an inlined callee.
			if n := len(d.Flow); n > 0 {
				step := &d.Flow[n-1]
				if m := len(step.Via); m > 0 {
					step.Via[m-1].Inlined = append(step.Via[m-1].Inlined, pos)
				}
			}
		case strings.HasPrefix(msg, "escflow:"):
			flowStarted = true
			text := strings.TrimSpace(strings.TrimPrefix(msg, "escflow:"))
			switch {
			case strings.HasPrefix(text, "flow:"):
				dst, src, ok := parseFlow(text)
				if !ok {
					return fmt.Errorf("escape flow %q: want \"flow: DST ← SRC:\"", text)
				}
				d.Flow = append(d.Flow, FlowStep{Dst: dst, Src: src, Pos: pos})
			case strings.HasPrefix(text, "from "):
				if len(d.Flow) == 0 {
					return fmt.Errorf("escape flow note %q before any flow", text)
				}
				expr, why := parseNote(strings.TrimPrefix(text, "from "))
				step := &d.Flow[len(d.Flow)-1]
				step.Via = append(step.Via, FlowNote{Expr: expr, Why: why, Pos: pos})
			default:
				return fmt.Errorf("escape flow entry %q: unknown form", text)
			}
		default:
			// Future compilers may add related entries; they are not
			// needed for an explanation, so they are skipped, not fatal.
		}
	}
	return nil
}

// parseFlow splits "flow: {heap} ← &x:" into its destination and source.
func parseFlow(text string) (dst, src string, ok bool) {
	text = strings.TrimSuffix(strings.TrimPrefix(text, "flow:"), ":")
	dst, src, ok = strings.Cut(text, "←")
	return strings.TrimSpace(dst), strings.TrimSpace(src), ok
}

// parseNote splits "fmt.Sprintf(... argument...) (call parameter)" into the
// expression and the compiler's reason. The reason is always a short phrase
// without parentheses, so the last " (" separates them even when the
// expression itself ends with a call.
func parseNote(text string) (expr, why string) {
	i := strings.LastIndex(text, " (")
	if i < 0 || !strings.HasSuffix(text, ")") {
		return text, ""
	}
	return text[:i], text[i+2 : len(text)-1]
}

// uriPath turns the compiler's file URI into a path. Under -trimpath the
// compiler writes "file://example.com/m/x.go", which parses as host
// "example.com" and path "/m/x.go": both together are the path it meant.
func uriPath(uri string) string {
	if !strings.HasPrefix(uri, "file://") {
		return uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		return strings.TrimPrefix(uri, "file://")
	}
	return u.Host + u.Path
}

// ReadDir parses every log file under dir, a directory given to the compiler
// as -json=0,dir, for example by `go build -gcflags=-json=0,dir`. Files that
// cannot be parsed are reported as errors; the rest are returned.
func ReadDir(dir string) ([]Diagnostic, []error) {
	raw, errs := readDir(dir)
	return finish(raw, nil), errs
}

func readDir(dir string) ([]Diagnostic, []error) {
	var diags []Diagnostic
	var errs []error
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, fmt.Errorf("read compiler logs: %w", err))
			return nil
		}
		if e.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("read compiler log: %w", err))
			return nil
		}
		defer f.Close()
		ds, err := parseLog(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("parse %s: %w", path, err))
			return nil
		}
		diags = append(diags, ds...)
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("read compiler logs in %s: %w", dir, err))
	}
	return diags, errs
}
