package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/run"
)

// runServerLookupSuite checks tokens and the lookups the dashboard server
// needs. s must be empty.
func runServerLookupSuite(t *testing.T, s *DB) {
	ctx := context.Background()
	secret, tok, err := s.CreateToken(ctx, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) < 40 || tok.Name != "ci" || tok.ID == 0 {
		t.Errorf("CreateToken = %q, %+v", secret, tok)
	}
	got, err := s.VerifyToken(ctx, secret)
	if err != nil || got.ID != tok.ID || got.Name != "ci" {
		t.Errorf("VerifyToken(secret) = %+v, %v", got, err)
	}
	for _, bad := range []string{"", secret + "x", hashToken(secret)} {
		if _, err := s.VerifyToken(ctx, bad); !errors.Is(err, ErrUnknownToken) {
			t.Errorf("VerifyToken(%q) = %v, want ErrUnknownToken", bad, err)
		}
	}
	var stored int
	if err := s.b.db.QueryRowContext(ctx, s.b.q(`SELECT COUNT(*) FROM api_tokens WHERE hash = ?`), secret).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("the secret itself is stored (%d rows, %v)", stored, err)
	}
	second, _, err := s.CreateToken(ctx, "")
	if err != nil || second == secret {
		t.Errorf("second token %q, %v", second, err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "ci" || list[1].Name != "token" {
		t.Errorf("Tokens = %+v, %v", list, err)
	}
	revoked, err := s.RevokeToken(ctx, tok.ID)
	if err != nil || revoked.ID != tok.ID || revoked.Name != "ci" || !revoked.Created.Equal(tok.Created) {
		t.Errorf("RevokeToken(%d) = %+v, %v; want the token %+v", tok.ID, revoked, err, tok)
	}
	if _, err := s.VerifyToken(ctx, secret); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("VerifyToken(revoked secret) = %v, want ErrUnknownToken", err)
	}
	if _, err := s.RevokeToken(ctx, tok.ID); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("RevokeToken of a revoked token = %v, want ErrUnknownToken", err)
	}
	if list, err := s.Tokens(ctx); err != nil || len(list) != 1 || list[0].Name != "token" {
		t.Errorf("Tokens after revoking one = %+v, %v; want the other one", list, err)
	}

	v0, err := s.BenchVersion(ctx)
	if err != nil || v0 != (Version{}) {
		t.Errorf("BenchVersion of an empty store = %+v, %v", v0, err)
	}
	if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: "abcdef12", Results: parseBench(t, benchText(2, 1))}); err != nil {
		t.Fatal(err)
	}
	if v1, err := s.BenchVersion(ctx); err != nil || v1.Runs != 1 || v1.MaxID == 0 {
		t.Errorf("BenchVersion after a save = %+v, %v; want one run", v1, err)
	}
	if _, err := s.ProfileRun(ctx, "nope"); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("ProfileRun(unknown) = %v", err)
	}
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	saved := &run.Run{ID: "r1", Dir: "/data/r1", Target: "http://x/", Start: start, End: start.Add(time.Second),
		Profiles: []run.ProfileFile{{Kind: "cpu", File: "cpu.pb.gz"}}}
	if err := s.SaveProfileRun(ctx, saved); err != nil {
		t.Fatal(err)
	}
	pr, err := s.ProfileRun(ctx, "r1")
	if err != nil || pr.Dir != "/data/r1" || !pr.Start.Equal(start) || pr.ProfileOK != 1 {
		t.Errorf("ProfileRun = %+v, %v", pr, err)
	}
}

func TestSQLiteServerLookups(t *testing.T) {
	s, _ := openTestSQLite(t)
	runServerLookupSuite(t, s)
}

func TestPostgresServerLookups(t *testing.T) {
	s, _ := openTestPostgres(t)
	runServerLookupSuite(t, s)
}
