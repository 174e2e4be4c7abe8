package gitstate

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestFirstParentPath walks a history with a merged side branch: the path
// from the first commit to the merge is the trunk's commits and the merge,
// not the side branch's, and ancestry is read both ways.
func TestFirstParentPath(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	trunk := history(t, r, 2) // first, c0, c1
	r.Git("checkout", "-q", "-b", "side")
	write(t, filepath.Join(r.Dir, "side.txt"), "side")
	side := r.Commit("side: a file | with a bar")
	r.Git("checkout", "-q", "trunk")
	write(t, filepath.Join(r.Dir, "f.txt"), "trunk")
	c2 := r.Commit("c2")
	r.Git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := r.Git("rev-parse", "HEAD")

	path, err := FirstParentPath(ctx, r.Dir, trunk[0], merge)
	if err != nil {
		t.Fatal(err)
	}
	var got, subjects []string
	for _, c := range path {
		got = append(got, c.Hash)
		subjects = append(subjects, c.Subject)
		if c.Time.IsZero() {
			t.Errorf("%s: no commit time", c.Hash)
		}
	}
	if want := []string{trunk[1], trunk[2], c2, merge}; !slices.Equal(got, want) {
		t.Errorf("path %v (%v), want %v", got, subjects, want)
	}
	if path[0].Parent != trunk[0] || path[3].Parent != c2 {
		t.Errorf("parents %s and %s, want %s and %s", path[0].Parent, path[3].Parent, trunk[0], c2)
	}
	d, err := Describe(ctx, r.Dir, side)
	if err != nil || d.Subject != "side: a file | with a bar" || d.Parent != trunk[2] {
		t.Errorf("Describe: %+v, %v", d, err)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{trunk[0], merge, true}, {side, merge, true}, {merge, trunk[0], false}, {side, c2, false}, {c2, c2, true}} {
		if got, err := IsAncestor(ctx, r.Dir, c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", c.a[:7], c.b[:7], got, err, c.want)
		}
	}
	if _, err := IsAncestor(ctx, r.Dir, "nosuch", merge); err == nil {
		t.Error("IsAncestor of an unknown commit: no error")
	}
}
