package profseries

// Exact is the selector of the one label set ls: each of its labels equal
// to its value.
func Exact(ls Labels) Selector {
	s := make(Selector, 0, len(ls))
	for _, l := range ls {
		s = append(s, Matcher{Name: l.Name, Op: MatchEqual, Value: l.Value})
	}
	return s
}
