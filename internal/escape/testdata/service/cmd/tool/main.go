// Command tool is a second command: both compile as package "main", whose
// compiler logs must not overwrite each other.
package main

import "fmt"

var last []byte

func main() {
	n := len(fmt.Sprint(1))
	last = make([]byte, n) // want: escape "`make([]byte, n)` escapes to heap: stored in `last`"
}
