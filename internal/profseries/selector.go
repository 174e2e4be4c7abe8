package profseries

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A MatchOp is how a matcher compares a label's value.
type MatchOp string

// The operators of a selector, as in Prometheus.
const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// A Matcher is one condition of a selector on one label.
type Matcher struct {
	Name  string
	Op    MatchOp
	Value string
	re    *regexp.Regexp
}

// Matches says whether value, the label's value ("" when a label set does
// not have it), satisfies m.
func (m Matcher) Matches(value string) bool {
	switch m.Op {
	case MatchEqual:
		return value == m.Value
	case MatchNotEqual:
		return value != m.Value
	case MatchRegexp:
		return m.re.MatchString(value)
	case MatchNotRegexp:
		return !m.re.MatchString(value)
	}
	return false
}

// A Selector chooses series by their labels: every matcher must hold. The
// empty selector chooses every series.
type Selector []Matcher

// Matches says whether the label set ls satisfies every matcher of s.
func (s Selector) Matches(ls Labels) bool {
	for _, m := range s {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

// String writes s so that ParseSelector reads it back.
func (s Selector) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		if isPlainName(m.Name) {
			b.WriteString(m.Name)
		} else {
			b.WriteString(quote(m.Name))
		}
		b.WriteString(string(m.Op))
		b.WriteString(quote(m.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// ParseSelector reads a selector in Prometheus's syntax:
//
//	{service="api", version=~"1\\..*", env!="dev", zone!~"eu-.*"}
//
// Values are quoted, with double quotes (Go escapes) or backquotes (raw),
// and may hold anything: spaces, dashes, unicode. Names are letters,
// digits, '_', '-', '.' and '/', or quoted like values. Regular
// expressions are Go's (RE2) and match the whole value, as Prometheus's
// do. A label a series does not have has the value "". The braces may be
// left out; "" and "{}" select every series. A selector that does not
// parse is one error naming the offset and what was expected there.
func ParseSelector(text string) (Selector, error) {
	p := selParser{text: text}
	sel, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("selector %s: at offset %d: %w", strconv.Quote(text), p.pos, err)
	}
	return sel, nil
}

type selParser struct {
	text string
	pos  int
}

func (p *selParser) parse() (Selector, error) {
	p.space()
	braced := p.eat("{")
	var sel Selector
	for {
		p.space()
		if p.pos == len(p.text) || braced && p.peek() == '}' {
			break
		}
		if len(sel) > 0 {
			if !p.eat(",") {
				return nil, fmt.Errorf("want ',' between matchers or '}' at the end, found %s", p.found())
			}
			p.space()
			if braced && p.peek() == '}' { // a trailing comma, as Prometheus allows
				break
			}
		}
		m, err := p.matcher()
		if err != nil {
			return nil, err
		}
		sel = append(sel, m)
	}
	if braced && !p.eat("}") {
		return nil, fmt.Errorf("want '}' to close the selector, found %s", p.found())
	}
	p.space()
	if p.pos != len(p.text) {
		return nil, fmt.Errorf("unexpected %s after the selector", p.found())
	}
	return sel, nil
}

func (p *selParser) matcher() (Matcher, error) {
	var m Matcher
	if c := p.peek(); c == '"' || c == '`' {
		name, err := p.quoted()
		if err != nil {
			return m, err
		}
		m.Name = name
	} else {
		start := p.pos
		for p.pos < len(p.text) {
			r, n := utf8.DecodeRuneInString(p.text[p.pos:])
			if !isNameRune(r) {
				break
			}
			p.pos += n
		}
		m.Name = p.text[start:p.pos]
	}
	if m.Name == "" {
		return m, fmt.Errorf("want a label name, found %s", p.found())
	}
	p.space()
	switch {
	case p.eat("=~"):
		m.Op = MatchRegexp
	case p.eat("!~"):
		m.Op = MatchNotRegexp
	case p.eat("!="):
		m.Op = MatchNotEqual
	case p.eat("="):
		m.Op = MatchEqual
	default:
		return m, fmt.Errorf("want an operator (=, !=, =~ or !~) after label %s, found %s", strconv.Quote(m.Name), p.found())
	}
	p.space()
	if c := p.peek(); c != '"' && c != '`' {
		return m, fmt.Errorf("want a quoted value (\"...\") for label %s, found %s", strconv.Quote(m.Name), p.found())
	}
	start := p.pos
	v, err := p.quoted()
	if err != nil {
		return m, err
	}
	m.Value = v
	if m.Op == MatchRegexp || m.Op == MatchNotRegexp {
		if m.re, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
			p.pos = start
			// Its text quotes the expression, which may hold a newline.
			return m, fmt.Errorf("label %q: bad regular expression: %s", m.Name, strings.ReplaceAll(err.Error(), "\n", `\n`))
		}
	}
	return m, nil
}

// quoted reads a Go string literal, double-quoted or raw.
func (p *selParser) quoted() (string, error) {
	q := p.text[p.pos]
	i := p.pos + 1
	for ; i < len(p.text); i++ {
		if p.text[i] == '\\' && q == '"' {
			i++
			continue
		}
		if p.text[i] == q {
			break
		}
	}
	if i >= len(p.text) {
		return "", fmt.Errorf("unterminated quoted string")
	}
	s, err := strconv.Unquote(p.text[p.pos : i+1])
	if err != nil {
		return "", fmt.Errorf("bad escape in quoted string %s", strconv.Quote(p.text[p.pos:i+1]))
	}
	p.pos = i + 1
	return s, nil
}

func (p *selParser) space() {
	for p.pos < len(p.text) {
		r, n := utf8.DecodeRuneInString(p.text[p.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		p.pos += n
	}
}

func (p *selParser) peek() byte {
	if p.pos < len(p.text) {
		return p.text[p.pos]
	}
	return 0
}

func (p *selParser) eat(s string) bool {
	if strings.HasPrefix(p.text[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

// found names what is at the parser's position, for errors.
func (p *selParser) found() string {
	if p.pos >= len(p.text) {
		return "the end"
	}
	r, _ := utf8.DecodeRuneInString(p.text[p.pos:])
	return strconv.QuoteRune(r)
}

func isNameRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r == '/' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}
