package store

import (
	"context"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// GaugeSeries reads gauge g of the series sel chooses over [from, to), per
// step (see profseries.GaugeSeries); no points when nothing is stored.
func (ps *ProfileSeries) GaugeSeries(ctx context.Context, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration) ([]profseries.GaugePoint, error) {
	ws, err := ps.Windows(ctx, profseries.Query{Type: g.Type, Selector: sel, From: from, To: to})
	if err != nil {
		return nil, err
	}
	return profseries.GaugeSeries(ws, g, step), nil
}
