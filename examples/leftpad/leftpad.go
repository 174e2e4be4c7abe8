package leftpad

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxLen bounds the len parameter: the response is built in memory, and a
// left-pad service has no business producing megabytes.
const maxLen = 1024

// mode selects an implementation. Each function that differs between modes
// keeps one name with both variants inside it, so a profile of either mode
// names the same functions and two profiles compare line by line.
type mode int

const (
	naive mode = iota
	optimized
)

func (m mode) String() string {
	if m == optimized {
		return "optimized"
	}
	return "naive"
}

func parseMode(s string) (mode, error) {
	switch s {
	case "naive":
		return naive, nil
	case "optimized":
		return optimized, nil
	}
	return naive, fmt.Errorf("unknown --mode %q: use naive, optimized or leaky", s)
}

// service is the left-pad API.
type service struct {
	mode  mode
	stats *statsd
	log   *accessLog
	// bufs holds response buffers in optimized mode.
	bufs sync.Pool
}

func (s *service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/leftpad/", s.handleLeftpad)
	return mux
}

// handleLeftpad serves GET /v1/leftpad/?str=S&len=N&chr=C.
func (s *service) handleLeftpad(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := r.URL.Query()
	str, chr, length, problem := parseParams(q.Get("str"), q.Get("len"), q.Get("chr"))
	var padTime time.Duration
	if problem != "" {
		s.writeJSON(w, http.StatusBadRequest, "error", problem)
	} else {
		padStart := time.Now()
		padded := leftpad(str, length, chr, s.mode)
		padTime = time.Since(padStart)
		s.writeJSON(w, http.StatusOK, "str", padded)
	}
	d := time.Since(start)
	s.stats.send([]metric{
		{name: "requests", kind: counter, value: 1},
		{name: "request_duration", kind: timing, value: d.Microseconds()},
		{name: "leftpad_duration", kind: timing, value: padTime.Microseconds()},
	})
	s.log.request(r, d)
}

// parseParams validates the query parameters; problem is non-empty, and
// says what is wrong, when they are invalid.
func parseParams(str, lenParam, chrParam string) (s string, chr rune, length int, problem string) {
	if lenParam == "" {
		return "", 0, 0, "missing len: want an integer from 0 to " + strconv.Itoa(maxLen)
	}
	length, err := strconv.Atoi(lenParam)
	if err != nil || length < 0 || length > maxLen {
		return "", 0, 0, "invalid len " + strconv.Quote(lenParam) + ": want an integer from 0 to " + strconv.Itoa(maxLen)
	}
	chr = ' '
	if chrParam != "" {
		r, size := utf8.DecodeRuneInString(chrParam)
		if size != len(chrParam) || r == utf8.RuneError {
			return "", 0, 0, "invalid chr " + strconv.Quote(chrParam) + ": want exactly one character"
		}
		chr = r
	}
	return str, chr, length, ""
}

// leftpad returns s preceded by as many chr as make it length runes long.
func leftpad(s string, length int, chr rune, m mode) string {
	n := length - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	if m == naive {
		// Each step copies everything built so far into a new string:
		// quadratic bytes copied and one allocation per character.
		for range n {
			s = string(chr) + s
		}
		return s
	}
	var b strings.Builder
	b.Grow(n*utf8.RuneLen(chr) + len(s))
	for range n {
		b.WriteRune(chr)
	}
	b.WriteString(s)
	return b.String()
}

// jsonContentType is assigned to the header map directly, which skips
// Header.Set's key canonicalisation and slice allocation. Never modified.
var jsonContentType = []string{"application/json"}

// writeJSON writes the object {key: value} with the given status.
func (s *service) writeJSON(w http.ResponseWriter, status int, key, value string) {
	if s.mode == naive {
		body, err := json.Marshal(map[string]string{key: value})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := append((*bp)[:0], '{')
	b = appendJSONString(b, key)
	b = append(b, ':')
	b = appendJSONString(b, value)
	b = append(b, '}')
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(b)
	*bp = b
	s.bufs.Put(bp)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it by default: HTML-sensitive <, > and & escaped, invalid UTF-8
// replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
