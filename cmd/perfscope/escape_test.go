package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The module the escape tests build: a small service whose lines carry
// known compiler diagnostics.
const escapeService = "../../internal/escape/testdata/service"

func TestEscapeCommand(t *testing.T) {
	out, err := runCLI(t, "escape", "--source-dir", escapeService)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "main.go:15  s = string(c) + s") || !strings.Contains(out, "    escape         `string(c) + s` escapes to heap") {
		t.Errorf("text output lacks main.go:15 and its reason:\n%s", out)
	}
	out, err = runCLI(t, "escape", "--source-dir", escapeService, "--kind", "bounds", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Diagnostics []struct{ Kind string }
		Warnings    []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if len(got.Diagnostics) == 0 || got.Warnings == nil {
		t.Errorf("json output = %s", out)
	}
	for _, d := range got.Diagnostics {
		if d.Kind != "bounds" {
			t.Errorf("--kind bounds shows a %s diagnostic", d.Kind)
		}
	}
}

func TestEscapeBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"escape", "--kind", "heap"}, 2, "unknown --kind"},
		{[]string{"escape", "--top", "0"}, 2, "--top"},
		{[]string{"escape", "--format", "xml"}, 2, "--format"},
		{[]string{"escape", "--source-dir", t.TempDir()}, 2, "not inside a Go module"},
		{[]string{"escape", "--source-dir", escapeService, "./nope"}, 1, ""},
	} {
		_, err := runCLI(t, tc.args...)
		var ue usageError
		var ee exitError
		switch {
		case err == nil:
			t.Errorf("%v: no error", tc.args)
		case tc.code == 2 && !errors.As(err, &ue):
			t.Errorf("%v: %v, want a usage error", tc.args, err)
		case tc.code == 1 && (!errors.As(err, &ee) || ee.code != 1):
			t.Errorf("%v: %v, want exit status 1", tc.args, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
