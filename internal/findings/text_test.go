package findings

import (
	"reflect"
	"testing"
)

func TestSentence(t *testing.T) {
	shares := join([]Text{sentence("{} of CPU", share(0.25)), sentence("{} of objects", share(0.5))}, " and ")
	got := sentence("{} allocates at {}: {}.", "main.f", "a.go:3", shares)
	want := Text{
		{Kind: Words, Words: "main.f allocates at a.go:3: "},
		{Kind: Share, Value: 0.25},
		{Kind: Words, Words: " of CPU and "},
		{Kind: Share, Value: 0.5},
		{Kind: Words, Words: " of objects."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	// A spliced Text is copied: joining words to it leaves it as it was.
	if shares[len(shares)-1].Words != " of objects" {
		t.Errorf("splicing changed the spliced text: %#v", shares)
	}
	// Arguments are never templates.
	if got := plain(sentence("calls {}", "f({})")); got != "calls f({})" {
		t.Errorf("an argument was read as a template: %q", got)
	}
}

func TestSentenceMiscounted(t *testing.T) {
	for _, f := range []func(){
		func() { sentence("{} and {}", "a") },
		func() { sentence("{}", "a", "b") },
		func() { sentence("{}", 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a sentence whose arguments do not match its marks did not panic")
				}
			}()
			f()
		}()
	}
}
