package findings

import (
	"strings"
	"testing"
)

func TestBuiltPerCall(t *testing.T) {
	fs := checkRule(t, "built-per-call", "percall", nil)
	for _, want := range []string{"regexp.Compile", "strings.NewReplacer"} {
		if len(fs) == 0 || !strings.Contains(plain(fs[0].Summary), want) {
			t.Errorf("summary does not name %s: %v", want, fs)
		}
	}
}

func TestIsInit(t *testing.T) {
	for fn, want := range map[string]bool{
		"main.init": true, "main.init.0": true, "main.init.func1": true, "example.com/m/pkg.init": true,
		"main.initialize": false, "main.main": false, "main.(*T).init": false,
	} {
		if got := isInit(fn); got != want {
			t.Errorf("isInit(%q) = %v, want %v", fn, got, want)
		}
	}
}
