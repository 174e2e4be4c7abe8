package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfscope/perfscope/internal/units"

	"github.com/perfscope/perfscope/internal/escape"
)

// WriteEscape renders an escape listing in format f: text, or JSON.
//
// The JSON form without a profile is {"diagnostics": [...], "warnings":
// [...]}; with a profile it is {"sample_type", "unit", "total",
// "hot_lines": [...], "warnings"}. Arrays are always present.
//
// The text is not yet laid out through the document layer (document.go):
// it has only a text form, shaped like the compiler's own -m listing (a
// source line, its reasons indented under it), which the document would
// give as items once a Markdown form is wanted.
func WriteEscape(w io.Writer, f Format, l *escape.Listing) error {
	switch f {
	case JSON:
		return writeEscapeJSON(w, l)
	case Text:
		bw := bufio.NewWriter(w)
		writeEscapeText(bw, l)
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write escape listing: %w", err)
		}
		return nil
	}
	return fmt.Errorf("escape listing: unsupported format %q", f)
}

func writeEscapeJSON(w io.Writer, l *escape.Listing) error {
	warnings := []string{}
	for _, e := range l.Warnings {
		warnings = append(warnings, e.Error())
	}
	var v any
	if l.Profiled {
		v = struct {
			SampleType string           `json:"sample_type"`
			Unit       string           `json:"unit"`
			Total      int64            `json:"total"`
			HotLines   []escape.HotLine `json:"hot_lines"`
			Warnings   []string         `json:"warnings"`
		}{l.SampleType, l.Unit, l.Total, nonNil(l.Hot), warnings}
	} else {
		v = struct {
			Diagnostics []escape.Diagnostic `json:"diagnostics"`
			Warnings    []string            `json:"warnings"`
		}{nonNil(l.Diagnostics), warnings}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Reasons quote code ("&x"); HTML escaping would garble it for readers.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write escape listing: %w", err)
	}
	return nil
}

// writeEscapeText shows each line once, with the compiler's reasons
// indented under it.
func writeEscapeText(w *bufio.Writer, l *escape.Listing) {
	if !l.Profiled {
		if len(l.Diagnostics) == 0 {
			fmt.Fprintf(w, "no compiler diagnostics of kind %s\n", l.Group)
			return
		}
		// Diagnostics come ordered by position: a new heading per line.
		var last escape.Position
		for _, d := range l.Diagnostics {
			at := escape.Position{File: d.Pos.File, Line: d.Pos.Line}
			if at != last {
				fmt.Fprintf(w, "%s:%d  %s\n", relPath(l.Root, at.File), at.Line, l.Source[at])
				last = at
			}
			writeDiagnostic(w, l.Root, d)
		}
		return
	}
	if len(l.Hot) == 0 {
		fmt.Fprintf(w, "no hot line of the profile has compiler diagnostics of kind %s\n", l.Group)
		return
	}
	fmt.Fprintf(w, "hot lines by %s with compiler diagnostics of kind %s:\n", l.SampleType, l.Group)
	for i, h := range l.Hot {
		share := ""
		if l.Total > 0 {
			share = " (" + units.Percent(float64(h.Value)/float64(l.Total)) + ")"
		}
		at := escape.Position{File: h.Source, Line: h.Line}
		fmt.Fprintf(w, "%2d. %s:%d  %s%s  %s\n", i+1, relPath(l.Root, h.Source), h.Line, units.Value(h.Value, l.Unit), share, l.Source[at])
		for _, d := range h.Diagnostics {
			writeDiagnostic(w, l.Root, d)
		}
	}
}

func writeDiagnostic(w *bufio.Writer, root string, d escape.Diagnostic) {
	where := ""
	if len(d.Inlined) > 0 {
		s := d.Site()
		where = fmt.Sprintf(" (inlined from %s:%d)", relPath(root, s.File), s.Line)
	}
	fmt.Fprintf(w, "    %-14s %s%s\n", d.Kind, d.Reason, where)
}

// relPath shows a file relative to root when it is inside it.
func relPath(root, file string) string {
	if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return file
}
