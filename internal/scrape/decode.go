package scrape

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A decoder reads a YAML document into the configuration's structs key by
// key, so that every error names the file, the line and the key: yaml.v3's
// own strict decoding finds unknown keys too, but reports them several to a
// message, by Go type name.
type decoder struct {
	file string
	// lines holds, for each struct decoded (by pointer), the line of
	// the mapping and of each key in it, for errors found after
	// decoding.
	lines map[any]map[string]int
}

var unmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// decode reads n into the struct v points to; where names the mapping
// in errors ("" for the top level).
func (d *decoder) decode(n *yaml.Node, v any, where string) error {
	return d.value(n, reflect.ValueOf(v).Elem(), where, where)
}

// value reads n into v. key is the key n is the value of, for errors;
// where names the mapping holding it.
func (d *decoder) value(n *yaml.Node, v reflect.Value, key, where string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return nil // an empty value keeps the default
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(n, v.Elem(), key, where)
	}
	if reflect.PointerTo(v.Type()).Implements(unmarshaler) {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			return d.at(n.Line, "%s: %v", key, err)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.mapping(n, v, key)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.at(n.Line, "%s: want a list, got %s", key, describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", key, i), where); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.at(n.Line, "%s: want a mapping of names to values, got %s", key, describe(n))
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode {
				return d.at(k.Line, "%s: want name: value pairs of text", key)
			}
			if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
				return d.at(k.Line, "%s: %q is set twice", key, k.Value)
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), reflect.ValueOf(val.Value))
		}
		v.Set(m)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.at(n.Line, "%s: want a single value, got %s", key, describe(n))
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return d.at(n.Line, "%s: %q is not %s", key, short(n.Value), kindName(v.Kind()))
		}
		return d.at(n.Line, "%s: %v", key, err)
	}
	return nil
}

// mapping reads a mapping into a struct, refusing keys the struct lacks.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, where string) error {
	if n.Kind != yaml.MappingNode {
		return d.at(n.Line, "%s: want a mapping of keys, got %s", orTop(where), describe(n))
	}
	fields := map[string]int{}
	var names []string
	t := v.Type()
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = i
		names = append(names, tag)
	}
	lines := map[string]int{"": n.Line}
	if d.lines == nil {
		d.lines = map[any]map[string]int{}
	}
	d.lines[v.Addr().Interface()] = lines
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.at(k.Line, "%s: a key that is not text", orTop(where))
		}
		fi, ok := fields[k.Value]
		if !ok {
			in := ""
			if where != "" {
				in = " in " + where
			}
			return d.at(k.Line, "unknown key %q%s%s", short(k.Value), in, suggest(k.Value, names))
		}
		if _, dup := lines[k.Value]; dup {
			return d.at(k.Line, "%s is set twice in %s", k.Value, orTop(where))
		}
		lines[k.Value] = k.Line
		if err := d.value(val, v.Field(fi), k.Value, k.Value); err != nil {
			return err
		}
	}
	return nil
}

// errorf is an error about the key of a struct decoded earlier, at that
// key's line (or its mapping's when the key was not written).
func (d *decoder) errorf(owner any, key, format string, args ...any) error {
	lines := d.lines[owner]
	line, ok := lines[key]
	if !ok {
		line = lines[""]
	}
	return d.at(line, format, args...)
}

func (d *decoder) at(line int, format string, args ...any) error {
	if line <= 0 {
		return fmt.Errorf("%s: %s", d.file, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s:%d: %s", d.file, line, fmt.Sprintf(format, args...))
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError is a YAML syntax error in the same one-line form.
func (d *decoder) yamlError(err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return d.at(line, "not valid YAML: %s", m[2])
	}
	return d.at(0, "not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

func orTop(where string) string {
	if where == "" {
		return "the top level"
	}
	return where
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return strconv.Quote(short(n.Value))
}

// short cuts text written from the file to a length an error line holds.
func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "..."
	}
	return s
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	}
	return "a number"
}

// suggest is " (did you mean X?)" for the known name closest to s, when
// one is close enough to be a typo.
func suggest(s string, known []string) string {
	best, bestDist := "", len(s)/2+2
	for _, k := range known {
		if dist := editDistance(s, k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
