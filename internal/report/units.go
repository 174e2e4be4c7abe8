package report

import (
	"strconv"
	"strings"
)

// shortPath keeps the last two elements of a source path: enough to find
// the file in an editor, short enough for a terminal. JSON keeps the
// whole path.
func shortPath(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	i := strings.LastIndexByte(file, '/')
	if i <= 0 {
		return file
	}
	if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
		return file[j+1:]
	}
	return file
}

// location formats file:line with a short path; "" without a file.
func location(file string, line int64) string {
	if file == "" {
		return ""
	}
	if line == 0 {
		return shortPath(file)
	}
	return shortPath(file) + ":" + strconv.FormatInt(line, 10)
}
