package pprofweb

import (
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// confine returns a copy of p whose source file names are files inside
// sourceDir, or "": pprof's source view reads the files a profile names
// from the server's disk, searching the parents of its search path for
// relative names, and a profile from outside could name any file. Each
// name becomes the absolute path of the file in sourceDir it maps to
// (profiles.ConfinedPath), which pprof opens as is (see noTrim).
func confine(p *profile.Profile, sourceDir string) *profile.Profile {
	p = p.Copy()
	found := map[string]string{}
	for _, fn := range p.Function {
		local, ok := found[fn.Filename]
		if !ok {
			if strings.HasSuffix(fn.Filename, ".go") {
				local, _ = profiles.ConfinedPath(sourceDir, fn.Filename)
			}
			found[fn.Filename] = local
		}
		fn.Filename = local
	}
	return p
}

// noTrim is pprof's -trim_path: a prefix no path has. Without one, pprof
// guesses a prefix to cut from each file name, which could turn an
// absolute name relative again.
const noTrim = "/perfscope-no-trim-8f2c1e5a"
