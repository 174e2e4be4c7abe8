package capture

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/pprof/profile"
)

// RunFile is the name of the file describing a run inside its directory.
const RunFile = "run.json"

// LoadRun reads the run saved in dir.
func LoadRun(dir string) (*Run, error) {
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("load run %s: no such directory", dir)
	case err != nil:
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("load run %s: a file, not a run directory", dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, RunFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load run %s: not a perfscope run directory (it has no %s)", dir, RunFile)
	}
	if err != nil {
		return nil, fmt.Errorf("load run %s: %w", dir, err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("load run %s: %s is not a valid run description: %w", dir, RunFile, err)
	}
	r.Dir = dir
	return &r, nil
}

// ListRuns reads every run saved directly under root, oldest first. A
// missing root holds no runs. Directories without run.json are skipped;
// runs whose run.json cannot be read are skipped and reported in the
// error, so the returned runs are usable even when the error is not nil.
func ListRuns(root string) ([]*Run, error) {
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
		if _, err := os.Stat(filepath.Join(dir, RunFile)); err != nil {
			continue
		}
		r, err := LoadRun(dir)
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
	runs, err := ListRuns(root)
	if len(runs) == 0 {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no runs in %s: profile a service first", root)
	}
	return runs[len(runs)-1], nil
}

// Lookup returns the record of one profile kind of the run.
func (r *Run) Lookup(kind string) (ProfileFile, bool) {
	for _, pf := range r.Profiles {
		if pf.Kind == kind {
			return pf, true
		}
	}
	return ProfileFile{}, false
}

// Has reports whether the run saved a profile of the kind.
func (r *Run) Has(kind string) bool {
	pf, ok := r.Lookup(kind)
	return ok && pf.File != ""
}

// Path returns the path of the saved profile of the kind, or "" when the
// run has none.
func (r *Run) Path(kind string) string {
	pf, ok := r.Lookup(kind)
	if !ok || pf.File == "" {
		return ""
	}
	return filepath.Join(r.Dir, pf.File)
}

// Open reads and parses the saved profile of the kind. When the run has
// none, the error says why, as recorded at capture time.
func (r *Run) Open(kind string) (*profile.Profile, error) {
	pf, ok := r.Lookup(kind)
	switch {
	case !ok:
		return nil, fmt.Errorf("run %s has no %s profile", r.ID, kind)
	case pf.File == "" && pf.Error != "":
		return nil, fmt.Errorf("run %s has no %s profile: %s", r.ID, kind, pf.Error)
	case pf.File == "":
		return nil, fmt.Errorf("run %s has no %s profile", r.ID, kind)
	}
	path := filepath.Join(r.Dir, pf.File)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s profile of run %s: %w", kind, r.ID, err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("read %s profile %s: %w", kind, path, err)
	}
	return p, nil
}

// save writes run.json into the run's directory atomically.
func (r *Run) save() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", RunFile, err)
	}
	data = append(data, '\n')
	path := filepath.Join(r.Dir, RunFile)
	if err := writeFileAtomic(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("save run %s: %w", path, err)
	}
	return nil
}

// saveProfile writes p as <kind>.pb.gz into the run's directory.
func (r *Run) saveProfile(kind string, p *profile.Profile) (string, error) {
	name := kind + ".pb.gz"
	path := filepath.Join(r.Dir, name)
	if err := writeFileAtomic(path, func(f *os.File) error { return p.Write(f) }); err != nil {
		return "", fmt.Errorf("save %s profile %s: %w", kind, path, err)
	}
	return name, nil
}
