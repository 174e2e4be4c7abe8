package findings

import (
	"strings"
	"testing"
)

func TestJSONReflect(t *testing.T) {
	fs := checkRule(t, "json-reflect", "jsonreflect", nil)
	if len(fs) > 0 && !strings.Contains(fs[0].Summary, "interface values") {
		t.Errorf("summary does not say the input is decoded into interface values: %s", fs[0].Summary)
	}
}
