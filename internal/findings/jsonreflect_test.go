package findings

import (
	"strings"
	"testing"
)

// TestJSONReflect diagnoses a function that decodes and encodes: the
// finding says both, and so does its fix.
func TestJSONReflect(t *testing.T) {
	fs := checkRule(t, "json-reflect", "jsonreflect", nil)
	if len(fs) > 0 && !strings.Contains(plain(fs[0].Summary), "interface values") {
		t.Errorf("summary does not say the input is decoded into interface values: %s", plain(fs[0].Summary))
	}
	for _, f := range fs {
		if !strings.Contains(plain(f.Summary), "encoding and decoding") {
			t.Errorf("summary does not say the function both encodes and decodes: %s", plain(f.Summary))
		}
		for _, want := range []string{"Encoding:", "Decoding:"} {
			if !strings.Contains(f.Fix.Summary, want) {
				t.Errorf("fix does not cover %s %s", want, f.Fix.Summary)
			}
		}
		if !strings.Contains(f.Fix.Example, "json.Unmarshal") || !strings.Contains(f.Fix.Example, "strconv.Append") {
			t.Errorf("fix example does not show both directions:\n%s", f.Fix.Example)
		}
	}
}

// TestJSONReflectEncode diagnoses a function that only encodes: nothing
// of the finding speaks of decoding.
func TestJSONReflectEncode(t *testing.T) {
	fs := checkRule(t, "json-reflect", "jsonencode", nil)
	for _, f := range fs {
		if !strings.Contains(plain(f.Summary), "encoding with encoding/json") {
			t.Errorf("summary does not say the function encodes: %s", plain(f.Summary))
		}
		if !strings.Contains(f.Fix.Summary, "Encode") || !strings.Contains(f.Fix.Example, "Encode") {
			t.Errorf("fix is not about encoding: %s\n%s", f.Fix.Summary, f.Fix.Example)
		}
		texts := []string{plain(f.Summary), f.Fix.Summary, f.Fix.Example}
		for _, ev := range f.Evidence {
			texts = append(texts, plain(ev.Detail))
		}
		for _, text := range texts {
			for _, word := range []string{"decod", "Decod", "Unmarshal"} {
				if strings.Contains(text, word) {
					t.Errorf("the finding on encoding alone speaks of decoding (%q): %s", word, text)
				}
			}
		}
	}
}
