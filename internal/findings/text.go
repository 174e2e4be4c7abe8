package findings

import "strings"

// A Text is a sentence or two whose numbers are kept as values: words
// and values in turn. A rule says what it found and with which numbers;
// the rendering layer writes the numbers, as it writes every number the
// tool shows, so that a share or a duration reads the same in a finding
// as in a table.
type Text []Part

// A Part is words, or one value of a Text.
type Part struct {
	Kind Kind
	// Words are the part's text when Kind is Words.
	Words string
	// Value is the number of every other kind.
	Value float64
	// Unit is a Quantity's unit, as a Measure's: nanoseconds, bytes,
	// count or goroutines.
	Unit string
}

// A Kind is what a Part holds, and so how it is written.
type Kind uint8

// Kinds of parts.
const (
	Words    Kind = iota // text, written as it is
	Share                // a fraction of a whole, from 0 to 1: "12.3%"
	Count                // a whole number: "412"
	Quantity             // an amount in Unit: "1.5ms", "3.46 MiB"
	Cores                // CPUs kept busy, to two decimals: "1.25"
	Seconds              // a length of time in seconds, to a tenth: "30.0s"
)

// share, count, quantity, cores and seconds are the values a rule puts
// in a Text.
func share(f float64) Part                    { return Part{Kind: Share, Value: f} }
func count[N int | int64 | float64](n N) Part { return Part{Kind: Count, Value: float64(n)} }
func quantity(v int64, unit string) Part      { return Part{Kind: Quantity, Value: float64(v), Unit: unit} }
func cores(c float64) Part                    { return Part{Kind: Cores, Value: c} }
func seconds(s float64) Part                  { return Part{Kind: Seconds, Value: s} }

// sentence builds a Text from a template whose {} marks take args in
// turn: a string is words, a Text is spliced in, a Part is a value.
func sentence(template string, args ...any) Text {
	var t Text
	for {
		before, after, found := strings.Cut(template, "{}")
		t = t.words(before)
		if !found {
			break
		}
		if len(args) == 0 {
			panic("findings: a sentence has more {} than arguments: " + template)
		}
		switch a := args[0].(type) {
		case string:
			t = t.words(a)
		case Text:
			for _, p := range a {
				t = t.add(p)
			}
		case Part:
			t = t.add(a)
		default:
			panic("findings: a sentence takes strings, Texts and Parts")
		}
		args, template = args[1:], after
	}
	if len(args) > 0 {
		panic("findings: a sentence has fewer {} than arguments: " + template)
	}
	return t
}

// add appends p, joining words to words before them.
func (t Text) add(p Part) Text {
	if p.Kind == Words {
		return t.words(p.Words)
	}
	return append(t, p)
}

func (t Text) words(s string) Text {
	if s == "" {
		return t
	}
	if n := len(t); n > 0 && t[n-1].Kind == Words {
		t[n-1].Words += s
		return t
	}
	return append(t, Part{Kind: Words, Words: s})
}

// join joins texts with sep between them, as strings.Join does.
func join(ts []Text, sep string) Text {
	var out Text
	for i, t := range ts {
		if i > 0 {
			out = out.words(sep)
		}
		for _, p := range t {
			out = out.add(p)
		}
	}
	return out
}
