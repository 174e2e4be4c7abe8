package escape

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// keyFormat names what a build key stands for: bump it whenever the
// compiler flags Build passes or the shape of a cached entry change.
const keyFormat = "perfscope escape diagnostics v1; -gcflags=-json=0"

// keyEnv are the go command's settings a build key records: where the
// module and the toolchain are, the target platform and its variants, the
// experiments and flags every build gets (GOFLAGS may carry -gcflags or
// -tags), and whether and with what cgo builds.
var keyEnv = []string{
	"GOMOD", "GOWORK", "GOROOT", "GOVERSION", "GOTOOLDIR", "GOMODCACHE", "GOENV",
	"GOOS", "GOARCH", "GO386", "GOAMD64", "GOARM", "GOARM64", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM",
	"GOEXPERIMENT", "GOFIPS140", "GOFLAGS", "CGO_ENABLED", "CC", "CXX",
}

// cgoEnv are cgo's settings a build key records as the environment holds
// them: asked for these, go env runs the C compiler, which costs more
// than the rest of a cached build. The go env file, where `go env -w`
// would set them, is in the key whole.
var cgoEnv = []string{"CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_FFLAGS", "CGO_LDFLAGS", "PKG_CONFIG"}

// buildKey returns the name of the cache entry for a build of listed (the
// packages named and every package they depend on, from go list -deps) in
// dir with the go command's settings env (keyEnv), or an error when
// something that decides the build cannot be read: then the build is not
// cached.
//
// What the compiler says about a package follows from the package's own
// source, from what it learns of its dependencies (their export data:
// inlinable bodies and escape summaries, from their own source in turn),
// from the compiler itself, the target platform, the build flags and tags
// and the -gcflags Build adds; what Build makes of it follows from
// perfscope's own code. The key is a digest of all of it:
//
//   - perfscope's executable (size and modification time) and keyFormat;
//   - opts, dir and pkgs as given;
//   - the go command's settings in keyEnv, cgo's in cgoEnv, the go env
//     file, and the compiler's executable (size and modification time)
//     under GOTOOLDIR;
//   - for every package, its import path, name, directory, module and
//     list of source files; and the content of each file, except in the
//     standard library and the module cache, which belong to a toolchain
//     or a module version and are only checked for size and time;
//   - the content of go.mod and go.sum of every module not in the module
//     cache (the go line sets the language version), and of go.work;
//   - the profile that guides optimizations (pgoProfiles), if any.
func buildKey(dir string, pkgs []string, listed []listedPackage, env map[string]string, opts Options) (string, error) {
	if env == nil {
		return "", errors.New("the go command's settings are unknown")
	}
	for _, f := range buildFlags(env, opts) {
		if strings.HasPrefix(f, "-overlay") {
			// The files the compiler reads are not the ones on disk.
			return "", errors.New("an -overlay build is not cached")
		}
	}
	k := keyHash{sha256.New()}
	k.field(keyFormat)
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := k.stamp(exe); err != nil {
		return "", err
	}
	k.field(opts.goCmd())
	for _, list := range [][]string{opts.Env, opts.BuildFlags, {fmt.Sprint(opts.External)}, pkgs} {
		k.field(fmt.Sprint(len(list)))
		for _, s := range list {
			k.field(s)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	k.field(abs)
	for _, name := range keyEnv {
		k.field(name + "=" + env[name])
	}
	for _, name := range cgoEnv {
		k.field(name + "=" + opts.getenv(name))
	}
	if f := env["GOENV"]; f != "" && f != "off" {
		if err := k.optional(f); err != nil {
			return "", err
		}
	}
	compile := filepath.Join(env["GOTOOLDIR"], "compile")
	if runtime.GOOS == "windows" {
		compile += ".exe"
	}
	if err := k.stamp(compile); err != nil {
		return "", fmt.Errorf("find the compiler: %w", err)
	}

	modCache := env["GOMODCACHE"]
	inModCache := func(path string) bool { return modCache != "" && within(path, modCache) }
	modFiles := map[string]bool{}
	for _, p := range listed {
		k.field(fmt.Sprintf("package %s %s %s standard=%t dep=%t", p.ImportPath, p.Name, p.Dir, p.Standard, p.DepOnly))
		if p.Error != nil {
			k.field("error " + p.Error.Err)
		}
		for m := p.Module; m != nil; m = m.Replace {
			k.field(fmt.Sprintf("module %s %s %s %s main=%t", m.Path, m.Version, m.Dir, m.GoMod, m.Main))
			if m.GoMod != "" && !inModCache(m.GoMod) {
				modFiles[m.GoMod] = true
				modFiles[filepath.Join(filepath.Dir(m.GoMod), "go.sum")] = true
			}
		}
		immutable := p.Standard || inModCache(p.Dir)
		for _, name := range p.sourceFiles() {
			path := filepath.Join(p.Dir, name)
			if immutable {
				err = k.stamp(path)
			} else {
				err = k.content(path)
			}
			if err != nil {
				return "", err
			}
		}
	}
	// A profile guides inlining, and so what escapes.
	for _, path := range pgoProfiles(dir, listed, env, opts) {
		if err := k.optional(path); err != nil {
			return "", err
		}
	}
	if w := env["GOWORK"]; w != "" && w != "off" {
		modFiles[w] = true
		modFiles[w+".sum"] = true
	}
	for _, path := range slices.Sorted(maps.Keys(modFiles)) {
		if err := k.optional(path); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(k.h.Sum(nil)), nil
}

// A keyHash digests what a build key is made of.
type keyHash struct{ h hash.Hash }

// field adds s, length first, so that no two lists of fields read alike.
func (k keyHash) field(s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	k.h.Write(n[:])
	io.WriteString(k.h, s)
}

// stamp adds the file at path by its size and modification time.
func (k keyHash) stamp(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	k.field(fmt.Sprintf("%s %d %d", path, st.Size(), st.ModTime().UnixNano()))
	return nil
}

// content adds the file at path by the digest of its content.
func (k keyHash) content(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	k.field(path + " " + hex.EncodeToString(sum[:]))
	return nil
}

// optional is content for a file that may be missing, which is recorded
// as such.
func (k keyHash) optional(path string) error {
	err := k.content(path)
	if errors.Is(err, os.ErrNotExist) {
		k.field(path + " missing")
		return nil
	}
	return err
}

// pgoProfiles lists the profiles that may guide the build's optimizations:
// the one -pgo names (in opts.BuildFlags or GOFLAGS), or by default
// (-pgo=auto) default.pgo in each command's directory, present or not.
func pgoProfiles(dir string, listed []listedPackage, env map[string]string, opts Options) []string {
	pgo := "auto"
	flags := buildFlags(env, opts)
	for i, f := range flags {
		if v, ok := strings.CutPrefix(f, "-pgo="); ok {
			pgo = v
		} else if f == "-pgo" && i+1 < len(flags) {
			pgo = flags[i+1]
		}
	}
	switch pgo {
	case "off":
		return nil
	case "auto":
		var files []string
		for _, p := range listed {
			if p.Name == "main" && !p.DepOnly && p.Dir != "" {
				files = append(files, filepath.Join(p.Dir, "default.pgo"))
			}
		}
		return files
	}
	if !filepath.IsAbs(pgo) {
		pgo = filepath.Join(dir, pgo)
	}
	return []string{pgo}
}

// buildFlags returns the build flags the go command gets, from GOFLAGS
// and then opts, each with one leading dash.
func buildFlags(env map[string]string, opts Options) []string {
	var flags []string
	for _, f := range append(strings.Fields(env["GOFLAGS"]), opts.BuildFlags...) {
		if strings.HasPrefix(f, "-") {
			f = "-" + strings.TrimLeft(f, "-")
		}
		flags = append(flags, f)
	}
	return flags
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
