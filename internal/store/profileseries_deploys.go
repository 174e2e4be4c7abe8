package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Judgements of deploys (migration18): profseries.FindDeploys keeps here,
// as JSON under its key, each judgement of a deploy whose sides are
// stored for good, so that one made by any process (the scraper judges
// the deploys the home page lists, after each pass of retention) serves
// every later one. Retention deletes those of deploys before the time it
// deleted scrapes before.

// KeptDeploy returns the judgement of a deploy kept under key, if any.
func (ps *ProfileSeries) KeptDeploy(ctx context.Context, key string) (profseries.Deploy, bool, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	var data string
	err := ps.b.reader(ctx).QueryRowContext(ctx, ps.b.q(`SELECT data FROM prof_deploys WHERE judged = ?`), key).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return profseries.Deploy{}, false, nil
	}
	if err != nil {
		return profseries.Deploy{}, false, fmt.Errorf("read a judged deploy: %w", err)
	}
	var d profseries.Deploy
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		// Not what this perfscope keeps: judged again, and kept anew.
		return profseries.Deploy{}, false, nil
	}
	return d, true, nil
}

// KeepDeploy keeps d, the judgement of the deploy at at, under key. A
// judgement JSON cannot hold (a value not finite) is not kept: it is
// judged again when asked.
func (ps *ProfileSeries) KeepDeploy(ctx context.Context, key string, at time.Time, d profseries.Deploy) error {
	data, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	if _, err := ps.b.db.ExecContext(ctx, ps.b.q(`INSERT INTO prof_deploys (judged, at, data) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`),
		key, nanos(at), string(data)); err != nil {
		return fmt.Errorf("keep a judged deploy: %w", err)
	}
	return nil
}
