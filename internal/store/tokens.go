package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A Token is an API token of the dashboard server, as the store knows it:
// its secret is shown once when it is created and only a hash of it is kept.
type Token struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// A TokenStore keeps the dashboard server's API tokens: it creates, checks,
// lists and revokes them. It is one of the kinds of data a DB keeps.
type TokenStore struct{ b *sqlDB }

// ErrUnknownToken is returned by VerifyToken for a secret no token has.
var ErrUnknownToken = errors.New("unknown token")

// tokenPrefix marks perfscope's tokens, so that a leaked one is recognisable
// in logs and by secret scanners.
const tokenPrefix = "pst_"

// hashToken is what the store keeps of a secret. A fast hash is enough: the
// secrets are 256 random bits, not passwords a person chose, so there is
// nothing to gain from guessing against the hash.
func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a new random token named name and returns its secret,
// which is not stored and cannot be recovered.
func (ts *TokenStore) CreateToken(ctx context.Context, name string) (string, Token, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "token"
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	t := Token{Name: name, Created: time.Now().UTC()}
	err := ts.b.db.QueryRowContext(ctx, ts.b.q(`INSERT INTO api_tokens (name, hash, created) VALUES (?, ?, ?) RETURNING id`),
		name, hashToken(secret), nanos(t.Created)).Scan(&t.ID)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	return secret, t, nil
}

// VerifyToken returns the token whose secret this is, or an error wrapping
// ErrUnknownToken.
func (ts *TokenStore) VerifyToken(ctx context.Context, secret string) (Token, error) {
	if secret == "" {
		return Token{}, fmt.Errorf("%w: none given", ErrUnknownToken)
	}
	var t Token
	var created int64
	err := ts.b.db.QueryRowContext(ctx, ts.b.q(`SELECT id, name, created FROM api_tokens WHERE hash = ?`), hashToken(secret)).
		Scan(&t.ID, &t.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, ErrUnknownToken
	}
	if err != nil {
		return Token{}, fmt.Errorf("check token: %w", err)
	}
	t.Created = fromNanos(created)
	return t, nil
}

// Tokens lists the tokens, oldest first.
func (ts *TokenStore) Tokens(ctx context.Context) ([]Token, error) {
	var out []Token
	err := ts.b.each(ctx, `SELECT id, name, created FROM api_tokens ORDER BY id`, nil, func(rows *sql.Rows) error {
		var t Token
		var created int64
		err := rows.Scan(&t.ID, &t.Name, &created)
		t.Created = fromNanos(created)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken deletes the token with this ID, so that its secret is refused
// from then on, and returns what it was. A token that does not exist is an
// error wrapping ErrUnknownToken.
func (ts *TokenStore) RevokeToken(ctx context.Context, id int64) (Token, error) {
	t := Token{ID: id}
	var created int64
	err := ts.b.db.QueryRowContext(ctx, ts.b.q(`DELETE FROM api_tokens WHERE id = ? RETURNING name, created`), id).
		Scan(&t.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("%w: no token has ID %d", ErrUnknownToken, id)
	}
	if err != nil {
		return Token{}, fmt.Errorf("revoke token %d: %w", id, err)
	}
	t.Created = fromNanos(created)
	return t, nil
}
