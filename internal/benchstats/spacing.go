package benchstats

import (
	"strings"

	"golang.org/x/perf/benchfmt"
)

// spacing gives each file configuration value the spelling it first had
// among all inputs when two spellings differ only in white space: "go test"
// pads its cpu line, and a stored commit keeps the model without padding,
// yet both name the same machine and must share a table. Values spelled
// alike are left as they are, so tables stay benchstat's.
type spacing struct {
	// seen maps a key and a value as read to the spelling to use.
	seen map[string]map[string][]byte
	// first maps a key and a value with its white space collapsed to
	// the first spelling read.
	first map[[2]string][]byte
}

func newSpacing() spacing {
	return spacing{seen: make(map[string]map[string][]byte), first: make(map[[2]string][]byte)}
}

// unify rewrites res's file configuration values to their first spelling.
// Results of one file repeat the same few values, so after the first
// result each value costs two map lookups and no allocation.
func (s spacing) unify(res *benchfmt.Result) {
	for i := range res.Config {
		c := &res.Config[i]
		if !c.File {
			continue
		}
		byValue := s.seen[c.Key]
		if byValue == nil {
			byValue = make(map[string][]byte)
			s.seen[c.Key] = byValue
		}
		spelling, ok := byValue[string(c.Value)]
		if !ok {
			collapsed := [2]string{c.Key, strings.Join(strings.Fields(string(c.Value)), " ")}
			spelling, ok = s.first[collapsed]
			if !ok {
				spelling = append([]byte(nil), c.Value...)
				s.first[collapsed] = spelling
			}
			byValue[string(c.Value)] = spelling
		}
		if string(spelling) != string(c.Value) {
			// The reader may reuse c.Value: copy into it rather than
			// share the map's slice.
			c.Value = append(c.Value[:0], spelling...)
		}
	}
}
