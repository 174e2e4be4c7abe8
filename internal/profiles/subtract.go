package profiles

import (
	"fmt"

	"github.com/google/pprof/profile"
)

// BaseLabel is the label Subtract puts on the samples it takes from the
// base profile. It is the name pprof's own tools give the base samples of
// a -diff_base comparison, so the difference opens in them as one.
const BaseLabel = "pprof::base"

// Subtract returns head − base, as `go tool pprof -diff_base` computes it:
// head's samples as they are and base's negated, marked with BaseLabel so
// they stay samples of their own beside head's. A sum over the difference
// (a function's flat or cum, a line's value) is then head's minus base's;
// a sample's own value says which side it came from. Neither input is
// changed. The profiles must measure the same sample types.
func Subtract(head, base *profile.Profile) (*profile.Profile, error) {
	if head == nil || base == nil {
		return nil, fmt.Errorf("subtract profiles: need both profiles")
	}
	if head.PeriodType == nil || base.PeriodType == nil {
		// Merge compares period types and cannot without them.
		head, base = withPeriodType(head), withPeriodType(base)
	}
	neg := base.Copy()
	neg.Scale(-1)
	for _, s := range neg.Sample {
		if s.Label == nil {
			s.Label = map[string][]string{}
		}
		s.Label[BaseLabel] = []string{"true"}
	}
	diff, err := profile.Merge([]*profile.Profile{head, neg})
	if err != nil {
		return nil, fmt.Errorf("subtract profiles: %w", err)
	}
	return diff, nil
}

// FromBase reports whether s is one of the samples Subtract took from
// the base profile.
func FromBase(s *profile.Sample) bool { return len(s.Label[BaseLabel]) > 0 }

// withPeriodType returns p, or a copy with an empty period type when it
// has none.
func withPeriodType(p *profile.Profile) *profile.Profile {
	if p.PeriodType != nil {
		return p
	}
	q := p.Copy()
	q.PeriodType = &profile.ValueType{}
	return q
}
