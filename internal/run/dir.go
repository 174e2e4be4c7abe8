package run

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/pprof/profile"
)

// File is the name of the file describing a run inside its directory.
const File = "run.json"

// DefaultRoot is the directory, relative to the working directory, under
// which runs are saved when no directory is given.
const DefaultRoot = ".perfscope/runs"

// NewID names a run by its UTC start time, so directory listings sort by
// time, plus a short random suffix so runs started in the same second by
// different processes do not collide.
func NewID(start time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return start.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Load reads the run saved in dir.
func Load(dir string) (*Run, error) {
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("load run %s: no such directory", dir)
	case err != nil:
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("load run %s: a file, not a run directory", dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load run %s: not a perfscope run directory (it has no %s)", dir, File)
	}
	if err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("load run %s: %s is not a valid run description: %w", dir, File, err)
	}
	// A profile's file is a name inside the directory: a run.json from
	// elsewhere must not make readers open files outside it.
	for _, pf := range r.Profiles {
		if pf.File != "" && (pf.File == "." || pf.File != filepath.Base(pf.File) || !filepath.IsLocal(pf.File)) {
			return nil, fmt.Errorf("load run %s: %s: %s profile file %q is not a file name in the run directory", dir, File, pf.Kind, pf.File)
		}
	}
	r.Dir = dir
	return &r, nil
}

// List reads every run saved directly under root, oldest first. A missing
// root holds no runs. Directories without run.json are skipped; runs whose
// run.json cannot be read are skipped and reported in the error, so the
// returned runs are usable even when the error is not nil.
func List(root string) ([]*Run, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", root, err)
	}
	var runs []*Run
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, File)); err != nil {
			continue
		}
		r, err := Load(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		runs = append(runs, r)
	}
	slices.SortStableFunc(runs, func(a, b *Run) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ID, b.ID))
	})
	return runs, errors.Join(errs...)
}

// Latest returns the most recently started run under root.
func Latest(root string) (*Run, error) {
	runs, err := List(root)
	if len(runs) == 0 {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no runs in %s: profile a service first", root)
	}
	return runs[len(runs)-1], nil
}

// Save writes run.json into the run's directory atomically: a reader
// never sees a half-written file, and a crash leaves the previous version.
func (r *Run) Save() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", File, err)
	}
	data = append(data, '\n')
	path := filepath.Join(r.Dir, File)
	if err := writeFileAtomic(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("save run %s: %w", path, err)
	}
	return nil
}

// SaveProfile writes p as <kind>.pb.gz into the run's directory and
// returns the file's name, relative to the directory, for its
// ProfileFile.
func (r *Run) SaveProfile(kind string, p *profile.Profile) (string, error) {
	name := kind + ".pb.gz"
	path := filepath.Join(r.Dir, name)
	if err := writeFileAtomic(path, func(f *os.File) error { return p.Write(f) }); err != nil {
		return "", fmt.Errorf("save %s profile %s: %w", kind, path, err)
	}
	return name, nil
}

// writeFileAtomic writes path through a temporary file in the same
// directory and a rename, so a reader never sees a half-written file and a
// crash leaves the previous version intact.
func writeFileAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes owner-only files; saved runs are ordinary files.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
