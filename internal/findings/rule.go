package findings

import "slices"

// A Rule recognises one kind of performance problem.
type Rule struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Summary is one line for rule listings.
	Summary string `json:"summary"`
	// Explanation is the long text of `perfscope report --explain RULE`:
	// what the rule looks for, its thresholds, why the problem costs what
	// it costs, and the trade-offs of the fixes.
	Explanation Text `json:"-"`
	// Resources are what the rule measures.
	Resources []Resource `json:"resources"`
	Fix       Fix        `json:"fix"`
	// compiler is set on rules whose evidence includes the compiler's
	// reasons, so their findings can say when those are missing.
	compiler bool
	// residual is set on a rule that reports what the others leave
	// unexplained: it runs after them and skips the lines they name.
	residual bool
	// symptom is set on a rule whose evidence shows where a cost lands
	// (the top allocating lines), not why: residual rules still report
	// its lines.
	symptom bool
	check   func(e *env, r *Rule) []Finding
}

// Rules returns every rule, in the order they are documented. The slice
// is new on each call.
func Rules() []Rule {
	return []Rule{
		concatRule(),
		concatHotRule(),
		fmtRule(),
		perCallRule(),
		writesRule(),
		loggerRule(),
		lockRule(),
		jsonRule(),
		gcRule(),
		growthRule(),
		ifaceRule(),
		goroutineRule(),
		idleRule(),
		rereadRule(),
		allocHotRule(),
		allocPackageRule(),
	}
}

// RuleIDs returns the ids of every rule, in order.
func RuleIDs() []string {
	var ids []string
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// finding starts a finding of rule r.
func (r *Rule) finding(severity float64, resource Resource, summary Text, evidence []Evidence) Finding {
	return Finding{
		Rule: r.ID, Title: r.Title, Severity: min(max(severity, 0), 1), Resource: resource,
		Summary: summary, Evidence: evidence, Fix: r.Fix,
	}
}

// selected reports whether rule id is among ids (all when ids is empty).
func selected(ids []string, id string) bool {
	return len(ids) == 0 || slices.Contains(ids, id)
}
