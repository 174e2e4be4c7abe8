package escape

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CacheEnv names the environment variable that moves perfscope's cache
// (default: the user's cache directory's perfscope folder); "off" turns
// the cache off.
const CacheEnv = "PERFSCOPE_CACHE"

// cacheLimit bounds the cache directory: past it, the entries used least
// recently go.
const cacheLimit = 256 << 20

// staleTemp is the age after which a temporary file in the cache is taken
// for the leftover of a write that never finished.
const staleTemp = time.Hour

// DefaultCacheDir returns where Build keeps the diagnostics of earlier
// builds: $PERFSCOPE_CACHE/escape when PERFSCOPE_CACHE is set, else the
// user's cache directory (os.UserCacheDir) + perfscope/escape. It returns
// "" when PERFSCOPE_CACHE is "off" or no cache directory is known.
func DefaultCacheDir() string {
	root := os.Getenv(CacheEnv)
	if root == "off" {
		return ""
	}
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(dir, "perfscope")
	}
	return filepath.Join(root, "escape")
}

// A diagnosticsCache keeps the diagnostics of finished builds, one file
// per build key (buildKey). An entry is written whole or not at all (to a
// temporary file, then renamed), carries a digest of its content, and is
// read as a miss when anything about it is wrong: a damaged entry costs a
// build, never a wrong answer. Failing to write is no error either: the
// next call builds again.
type diagnosticsCache struct {
	dir   string
	limit int64
}

// newCache returns the cache opts name, or nil for none.
func newCache(opts Options) *diagnosticsCache {
	dir := opts.CacheDir
	if dir == "" {
		dir = DefaultCacheDir()
	}
	if dir == "" || dir == "off" {
		return nil
	}
	return &diagnosticsCache{dir: dir, limit: cacheLimit}
}

// cacheMagic starts every entry, followed by the hex SHA-256 of the rest
// of the file, a newline, and the entry in gob (which reads a build's
// diagnostics three times faster than JSON).
const cacheMagic = "perfscope-escape-cache 1 "

// cacheExt ends the name of every entry.
const cacheExt = ".gob"

type cacheEntry struct {
	Key         string
	Diagnostics []Diagnostic
}

func (c *diagnosticsCache) path(key string) string {
	return filepath.Join(c.dir, key+cacheExt)
}

// get returns the diagnostics stored under key.
func (c *diagnosticsCache) get(key string) ([]Diagnostic, bool) {
	if c == nil {
		return nil, false
	}
	path := c.path(key)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, false
	}
	sum, ok := strings.CutPrefix(string(head), cacheMagic)
	if !ok {
		return nil, false
	}
	if want := sha256.Sum256(body); sum != hex.EncodeToString(want[:]) {
		return nil, false
	}
	var e cacheEntry
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&e); err != nil || e.Key != key {
		return nil, false
	}
	// The modification time is when an entry was last used: eviction
	// keeps the entries in use.
	now := time.Now()
	os.Chtimes(path, now, now)
	return e.Diagnostics, true
}

// put stores diags under key and keeps the cache within its limit.
func (c *diagnosticsCache) put(key string, diags []Diagnostic) {
	if c == nil {
		return
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(cacheEntry{Key: key, Diagnostics: diags}); err != nil || int64(buf.Len()) > c.limit/2 {
		return
	}
	body := buf.Bytes()
	sum := sha256.Sum256(body)
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	if err := writeFileAtomic(c.path(key), []byte(cacheMagic+hex.EncodeToString(sum[:])+"\n"), body); err != nil {
		return
	}
	c.trim(key)
}

// writeFileAtomic writes the parts to path through a temporary file in the
// same directory, renamed over path once complete, so that a reader sees
// the old file or the new one, never half of one.
func writeFileAtomic(path string, parts ...[]byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	for _, p := range parts {
		if _, err = f.Write(p); err != nil {
			break
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// trim removes the entries used least recently until the cache holds no
// more than its limit, sparing the entry just written, and temporary files
// of writes that never finished.
func (c *diagnosticsCache) trim(keep string) {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasSuffix(e.Name(), ".tmp") {
			if time.Since(info.ModTime()) > staleTemp {
				os.Remove(filepath.Join(c.dir, e.Name()))
			}
			continue
		}
		total += info.Size()
		if e.Name() != keep+cacheExt {
			files = append(files, file{e.Name(), info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return a.used.Compare(b.used) })
	for _, f := range files {
		if total <= c.limit {
			break
		}
		if err := os.Remove(filepath.Join(c.dir, f.name)); err == nil || errors.Is(err, os.ErrNotExist) {
			total -= f.size
		}
	}
}
