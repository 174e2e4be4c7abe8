package gate

import (
	"encoding/json"
	"math"
	"time"
)

// A Report is a gate decision with the context a reader needs: what was
// compared, how, and how long it took. Its JSON field names are stable.
type Report struct {
	Base      string        `json:"base"` // "main (1a2b3c4d5e6f)"
	Head      string        `json:"head"` // "working tree (…)"
	Rounds    int           `json:"rounds"`
	Benchtime string        `json:"benchtime"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Decision  *Decision     `json:"decision"`
	// Notes are things the reader should know that are not failures,
	// such as packages that exist only in the head.
	Notes []string `json:"notes,omitempty"`
}

// MarshalJSON writes a judgement with null for numbers JSON cannot carry
// (a benchmark may report +Inf, and an unbounded resolution is +Inf).
func (j Judgement) MarshalJSON() ([]byte, error) {
	type plain Judgement // without this method
	return json.Marshal(struct {
		plain
		Base       []*float64 `json:"base"`
		Head       []*float64 `json:"head"`
		BaseMedian *float64   `json:"base_median"`
		HeadMedian *float64   `json:"head_median"`
		Change     *float64   `json:"change"`
		Resolution *float64   `json:"resolution"`
	}{plain(j), finites(j.Base), finites(j.Head), finite(j.BaseMedian), finite(j.HeadMedian), finite(j.Change), finite(j.Resolution)})
}

func finites(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = finite(x)
	}
	return out
}

// finite returns nil for values JSON cannot carry (±Inf, NaN).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}
