package profseries

import "strconv"

// quote writes a label value the way a selector reads it back.
func quote(s string) string { return strconv.Quote(s) }
