package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// Run reads the indexed run id from its directory, with the profile
// limits set. A run whose directory is gone is an ErrNotFound.
func (d *Dashboard) Run(ctx context.Context, id string) (*run.Run, error) {
	pr, err := d.cfg.Store.ProfileRun(ctx, id)
	if err != nil {
		return nil, err
	}
	saved, err := run.Load(pr.Dir)
	if err != nil {
		if _, statErr := os.Stat(pr.Dir); errors.Is(statErr, fs.ErrNotExist) {
			return nil, NotFound(fmt.Sprintf("run %s is indexed, but its directory %s is gone", id, pr.Dir))
		}
		return nil, err
	}
	saved.Limits = d.cfg.ProfileLimits
	return saved, nil
}

// MissingProfile is the ErrNotFound saying why saved has no profile of
// kind.
func MissingProfile(saved *run.Run, kind string) error {
	if pf, ok := saved.Lookup(kind); ok && pf.Error != "" {
		return NotFound(fmt.Sprintf("run %s has no %s profile: %s", saved.ID, kind, pf.Error))
	}
	var kinds []string
	for _, pf := range saved.Profiles {
		if pf.File != "" {
			kinds = append(kinds, pf.Kind)
		}
	}
	return NotFound(fmt.Sprintf("run %s has no %s profile; it has %v", saved.ID, kind, kinds))
}

// Analysis returns the shared analysis of saved with opts, waiting for it
// at most Config.Wait; an ErrUnavailable saying so when it is not done by
// then.
func (d *Dashboard) Analysis(ctx context.Context, saved *run.Run, opts profiles.Options) (*analysis.Entry, error) {
	e, err := d.cfg.Analyses.Wait(ctx, saved, opts, d.cfg.Wait)
	if errors.Is(err, analysis.ErrAnalysing) {
		return nil, unavailable(fmt.Sprintf("run %s is still being analysed: reload in a few seconds", saved.ID))
	}
	return e, err
}
