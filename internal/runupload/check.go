package runupload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/units"
)

// check reads the received run in dir and checks it is whole: a valid
// run.json whose listed profiles are all there and parse within the
// limits, together too, and nothing else.
func check(ctx context.Context, dir string, lim Limits) (*run.Run, error) {
	data, err := os.ReadFile(filepath.Join(dir, run.File))
	if errors.Is(err, os.ErrNotExist) {
		return nil, malformed("the upload has no run.json: send the directory 'perfscope profile' saved")
	}
	if err != nil {
		return nil, err
	}
	var saved run.Run
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, malformed(fmt.Sprintf("run.json is not a valid run description: %v", err))
	}
	if err := CheckID(saved.ID); err != nil {
		return nil, malformed("run.json: " + err.Error())
	}
	listed := map[string]bool{run.File: true}
	var memory int64
	for _, pf := range saved.Profiles {
		if pf.File == "" {
			continue
		}
		if !filePattern.MatchString(pf.File) {
			return nil, malformed(fmt.Sprintf("run.json: profile file %q: want a <kind>.pb.gz name in the run directory", pf.File))
		}
		if listed[pf.File] {
			continue
		}
		listed[pf.File] = true
		st, err := checkProfile(ctx, filepath.Join(dir, pf.File), lim)
		if err != nil {
			return nil, err
		}
		memory += st.Memory
	}
	maxMemory := lim.Profiles.MaxMemory
	if maxMemory == 0 {
		maxMemory = fetch.DefaultMaxMemory
	}
	if maxMemory > 0 && memory > maxMemory {
		return nil, tooLarge(fmt.Sprintf("the run's profiles would take %s of memory together, over the server's limit of %s for one analysis", units.Bytes(float64(memory)), units.Bytes(float64(maxMemory))))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			return nil, malformed(fmt.Sprintf("file %q is not listed in run.json's profiles", e.Name()))
		}
	}
	return &saved, nil
}

// checkProfile parses one profile through the bounded reader, within a
// slot when the limits give one.
func checkProfile(ctx context.Context, p string, lim Limits) (fetch.Stats, error) {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return fetch.Stats{}, malformed(fmt.Sprintf("run.json lists %s, but the upload has no such file", name))
	}
	if err != nil {
		return fetch.Stats{}, err
	}
	defer f.Close()
	if lim.Slot != nil {
		release, err := lim.Slot(ctx)
		if err != nil {
			return fetch.Stats{}, fmt.Errorf("check %s: %w", name, err)
		}
		defer release()
	}
	_, st, err := fetch.Parse(ctx, f, lim.Profiles)
	switch {
	case errors.Is(err, fetch.ErrTooLarge):
		return st, tooLarge(fmt.Sprintf("%s: %v (perfscope serve --max-profile-size)", name, err))
	case ctx.Err() != nil:
		return st, fmt.Errorf("check %s: %w", name, ctx.Err())
	case err != nil:
		return st, malformed(fmt.Sprintf("%s is not a pprof profile: %v", name, err))
	}
	return st, nil
}
